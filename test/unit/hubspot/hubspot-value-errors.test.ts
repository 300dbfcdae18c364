import { describe, expect, it } from 'vitest';
import { classifyHubSpotError, classifyHubSpotItemError, refusalHint, refusedValuesIn, refusedValuesOf, STALE_DEFINITIONS } from '../../../adapters/hubspot/hubspot-errors.js';

const list = (entries: Record<string, unknown>[]) => `Property values were not valid: ${JSON.stringify(entries)}`;
const apiException = (body: unknown) => Object.assign(new Error('HTTP-Code: 400'), { code: 400, body, headers: {} });

describe('refusedValuesIn', () => {
  it.each([
    ['INVALID_OPTION without propertyValue (the value from the message)', { isValid: false, message: 'reports was not one of the allowed options: [PRODUCT_ISSUE, BILLING_ISSUE]', error: 'INVALID_OPTION', name: 'hs_ticket_category' }, 'reports'],
    ['INVALID_INTEGER with propertyValue', { isValid: false, message: '1.4e-14 was not a valid number.', error: 'INVALID_INTEGER', name: 'amount', propertyValue: '1.4e-14' }, '1.4e-14'],
    ['INVALID_DATE not midnight', { isValid: false, message: '1635535865 is at 22:18:55.865 UTC, not midnight!', error: 'INVALID_DATE', name: 'closedate' }, '1635535865'],
    ['LEADING_TRAILING_WHITESPACE', { isValid: false, message: '"Customer " includes leading or trailing whitespace.', error: 'LEADING_TRAILING_WHITESPACE', name: 'lifecyclestage' }, 'Customer '],
    ['INVALID_EMAIL', { isValid: false, message: 'Email address ana@ is invalid', error: 'INVALID_EMAIL', name: 'email' }, 'ana@'],
    ['a stage outside its pipeline', { isValid: false, message: 'registered is not a valid pipeline stage ID. Valid options are: pipelineId=default : [appointmentscheduled, closedwon]', error: 'INVALID_OPTION', name: 'dealstage' }, 'registered'],
    ['an unknown wording (no value)', { isValid: false, message: 'something new', error: 'SOMETHING_NEW', name: 'x' }, undefined],
  ])('reads %s', (_what, entry, value) => {
    const [r] = refusedValuesIn(list([entry]));
    expect(r).toEqual({ name: entry.name, code: entry.error, message: entry.message, ...(value !== undefined ? { value } : {}) });
  });

  it.each([
    ['PROPERTY_DOESNT_EXIST (a setup problem, not a value)', list([{ isValid: false, message: 'Property "x" does not exist', error: 'PROPERTY_DOESNT_EXIST', name: 'x' }])],
    ['a message that is not the list', 'Property values were not valid'],
    ['a list that is not JSON', 'Property values were not valid: [oops]'],
  ])('reads nothing from %s', (_what, message) => {
    expect(refusedValuesIn(message)).toEqual([]);
  });
});

describe('classifyHubSpotError on a refused value', () => {
  it('names the property, code and value, keeps the batch splittable, and ends telling the user to pull the definitions', () => {
    const body = { status: 'error', category: 'VALIDATION_ERROR', correlationId: 'c-1', message: list([{ isValid: false, message: 'client was not one of the allowed options: [lead, customer]', error: 'INVALID_OPTION', name: 'lifecyclestage' }]) };
    const err = classifyHubSpotError(apiException(body));
    expect(err.message).toBe('[crm-upsert] [hubspot] HubSpot rejected the request (HTTP 400 VALIDATION_ERROR): refused lifecyclestage = "client" (INVALID_OPTION: client was not one of the allowed options: [lead, customer]) (correlationId c-1); the field definitions may be stale: run `crm-upsert schema pull`');
    expect(err).toMatchObject({ status: 400, vendorCode: 'INVALID_OPTION', splittable: true, retryable: false });
    expect(refusedValuesOf(err)).toEqual([{ name: 'lifecyclestage', code: 'INVALID_OPTION', message: 'client was not one of the allowed options: [lead, customer]', value: 'client' }]);
  });

  it('names the value in a 207 per-input error too', () => {
    const err = classifyHubSpotItemError({ status: 'error', category: 'VALIDATION_ERROR', message: list([{ isValid: false, message: 'next Friday was not a valid date.', error: 'INVALID_DATE', name: 'hs_timestamp', propertyValue: 'next Friday' }]) });
    expect(err.message).toMatch(/HubSpot refused hs_timestamp = "next Friday" \(INVALID_DATE: next Friday was not a valid date\.\); the field definitions may be stale: run `crm-upsert schema pull`$/);
    expect(err.vendorCode).toBe('INVALID_DATE');
  });

  it('knows no refused values of an error that names none', () => {
    expect(refusedValuesOf(classifyHubSpotError(apiException({ status: 'error', category: 'VALIDATION_ERROR', message: 'Batch input limit exceeded' })))).toEqual([]);
  });
});

describe('refusalHint: the stale-definitions hint only where a newer pull could change the verdict', () => {
  const r = (name: string, code: string, message: string) => ({ name, code, message });
  const STALE = `; ${STALE_DEFINITIONS}`;
  it.each([
    ['an option missing from the pulled list', [r('lifecyclestage', 'INVALID_OPTION', 'client was not one of the allowed options: [lead]')], STALE],
    ['a date on a field the file types as text', [r('closedate', 'INVALID_DATE', 'next Friday was not a valid date.')], STALE],
    ['a number on a field the file types as text', [r('amount', 'INVALID_INTEGER', '$5 was not a valid number.')], STALE],
    ['whitespace the file would have trimmed', [r('lifecyclestage', 'LEADING_TRAILING_WHITESPACE', '"Lead " includes leading or trailing whitespace.')], STALE],
    ['a property made read-only', [r('hs_score', 'READ_ONLY_VALUE', '"hs_score" is a read only property; its value cannot be set.')], STALE],
    ['an email HubSpot finds invalid (checked with or without a file)', [r('email', 'INVALID_EMAIL', 'Email address jo@acme is invalid')], ''],
    ['an unknown refusal', [r('x', 'SOMETHING_NEW', 'something new')], ''],
    ['a stage outside the deal\'s pipeline', [r('dealstage', 'INVALID_OPTION', 'closedwon is not a valid pipeline stage ID. Valid options are: pipelineId=renewals : [renewal_won]')],
      '; a stage must be one of the record\'s pipeline\'s stages: send pipeline with dealstage, or a stage of the pipeline the record is in'],
    ['a ticket stage outside its pipeline', [r('hs_pipeline_stage', 'INVALID_OPTION', '4 is not a valid pipeline stage ID. Valid options are: pipelineId=0 : [1, 2, 3]')],
      '; a stage must be one of the record\'s pipeline\'s stages: send hs_pipeline with hs_pipeline_stage, or a stage of the pipeline the record is in'],
  ])('for %s', (_what, refused, hint) => {
    expect(refusalHint(refused)).toBe(hint);
  });

  it('leaves the hint off a classified INVALID_EMAIL and a stage outside its pipeline', () => {
    const email = classifyHubSpotItemError({ status: 'error', category: 'VALIDATION_ERROR', message: list([{ isValid: false, message: 'Email address jo@acme is invalid', error: 'INVALID_EMAIL', name: 'email' }]) });
    expect(email.message).toMatch(/HubSpot refused email = "jo@acme" \(INVALID_EMAIL: Email address jo@acme is invalid\)$/);
    const stage = classifyHubSpotError(apiException({ status: 'error', category: 'VALIDATION_ERROR', message: list([{ isValid: false, message: 'closedwon is not a valid pipeline stage ID. Valid options are: pipelineId=renewals : [renewal_won]', error: 'INVALID_OPTION', name: 'dealstage' }]) }));
    expect(stage.message).not.toContain('schema pull');
    expect(stage.message).toContain('dealstage = "closedwon" (INVALID_OPTION: closedwon is not a valid pipeline stage ID');
    expect(stage.message).toMatch(/send pipeline with dealstage, or a stage of the pipeline the record is in$/);
  });
});
