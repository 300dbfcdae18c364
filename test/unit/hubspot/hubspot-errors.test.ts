import { ApiException } from '@hubspot/api-client/lib/codegen/crm/objects/apis/exception.js';
import { describe, expect, it } from 'vitest';
import { classifyHubSpotError, classifyHubSpotItemError, HubSpotUnreadableResponse } from '../../../adapters/hubspot/index.js';
import { refusedValuesOf } from '../../../adapters/hubspot/hubspot-errors.js';
import { CrmError, ConfigError, registerSecret } from '../../../src/errors.js';

const apiError = (code: number, body: unknown, headers: Record<string, string> = {}) => new ApiException(code, 'An error occurred.', body, headers);
const rateBody = (policyName: string, message: string) => ({ status: 'error', message, errorType: 'RATE_LIMIT', correlationId: 'c-429', policyName });

describe('classifyHubSpotError', () => {
  it('treats a ten-second 429 as rate limited and honours Retry-After', () => {
    const e = classifyHubSpotError(apiError(429, rateBody('TEN_SECONDLY_ROLLING', 'You have reached your ten_secondly_rolling limit.'), { 'retry-after': '2' }));
    expect(e).toMatchObject({ kind: 'rate_limited', retryAfterMs: 2000, status: 429, correlationId: 'c-429', retryable: true });
    expect(e.message).toContain('ten_secondly_rolling');
  });

  it('falls back to the rate-limit interval header, then to 10 s', () => {
    const body = rateBody('TEN_SECONDLY_ROLLING', 'You have reached your ten_secondly_rolling limit.');
    expect(classifyHubSpotError(apiError(429, body, { 'x-hubspot-ratelimit-interval-milliseconds': '5000' })).retryAfterMs).toBe(5000);
    expect(classifyHubSpotError(apiError(429, body)).retryAfterMs).toBe(10_000);
  });

  it('waits one second on the search secondly limit', () => {
    const e = classifyHubSpotError(apiError(429, { status: 'error', message: 'You have reached your secondly limit.', errorType: 'RATE_LIMIT' }));
    expect(e).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000 });
  });

  it('stops on the daily limit with a clear, non-retryable quota error', () => {
    const e = classifyHubSpotError(apiError(429, rateBody('DAILY', 'You have reached your daily limit.'), { 'retry-after': '1' }));
    expect(e).toMatchObject({ kind: 'quota', retryable: false, vendorCode: 'DAILY' });
    expect(e.message).toMatch(/daily API limit reached.*retry-failed/s);
  });

  it.each([500, 502, 503, 504])('treats %i as transient and ambiguous', (status) => {
    expect(classifyHubSpotError(apiError(status, { message: 'oops' }))).toMatchObject({ kind: 'transient', ambiguous: true, status });
  });

  it.each([
    ['ECONNRESET', 'socket hang up', true],
    ['ETIMEDOUT', 'connect ETIMEDOUT', true],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1', false],
  ])('treats network error %s as transient (ambiguous: %s)', (code, message, ambiguous) => {
    const err = Object.assign(new Error(`request to http://127.0.0.1:1/crm/v3/objects/contacts/batch/upsert failed, reason: ${message}`), { name: 'FetchError', code, errno: code, type: 'system' });
    expect(classifyHubSpotError(err)).toMatchObject({ kind: 'transient', ambiguous });
  });

  it('treats a response without a Content-Type as transient and ambiguous', () => {
    const e = classifyHubSpotError(new Error('Cannot parse content. No Content-Type defined.'));
    expect(e).toMatchObject({ kind: 'transient', ambiguous: true, vendorCode: 'NO_CONTENT_TYPE' });
  });

  it('makes a whole-batch validation 400 permanent and splittable, with the message and correlation id', () => {
    const e = classifyHubSpotError(apiError(400, { status: 'error', message: 'Property values were not valid: bogus', category: 'VALIDATION_ERROR', correlationId: 'c-400' }));
    expect(e).toMatchObject({ kind: 'permanent', splittable: true, retryable: false, vendorCode: 'VALIDATION_ERROR' });
    expect(e.message).toContain('Property values were not valid: bogus');
    expect(e.message).toContain('c-400');
  });

  it('makes a whole-batch 409 CONFLICT permanent and splittable, naming the existing record', () => {
    const e = classifyHubSpotError(apiError(409, { status: 'error', message: 'Contact already exists. Existing ID: 37765128953', category: 'CONFLICT' }));
    expect(e).toMatchObject({ kind: 'permanent', splittable: true, retryable: false, status: 409, vendorCode: 'CONFLICT' });
    expect(e.message).toContain('Contact already exists. Existing ID: 37765128953');
  });

  it('makes a non-unique idProperty a setup error: permanent, not splittable, pointing at check-setup', () => {
    const e = classifyHubSpotError(apiError(400, { status: 'error', message: 'Unable to perform update/upsert by non-unique email property', category: 'VALIDATION_ERROR' }), { idProperty: 'email' });
    expect(e).toMatchObject({ kind: 'permanent', splittable: false, status: 400 });
    expect(e.message).toContain('non-unique email property');
    expect(e.message).toContain('run `crm-upsert check-setup`');
  });

  const doesntExist = (name: string) => ({
    status: 'error',
    category: 'VALIDATION_ERROR',
    message: `Property values were not valid: ${JSON.stringify([{ isValid: false, message: `Property "${name}" does not exist`, error: 'PROPERTY_DOESNT_EXIST', name }])}`,
  });

  it('makes PROPERTY_DOESNT_EXIST a setup error when every input sends the property, and splittable when only some do', () => {
    const everyInput = classifyHubSpotError(apiError(400, doesntExist('nope')), { sentProperties: [['ai_external_id', 'nope'], ['ai_external_id', 'email', 'nope']] });
    const someInputs = classifyHubSpotError(apiError(400, doesntExist('nope')), { sentProperties: [['ai_external_id', 'nope'], ['ai_external_id', 'email']] });
    const unknownInputs = classifyHubSpotError(apiError(400, doesntExist('nope')));
    expect(everyInput).toMatchObject({ kind: 'permanent', splittable: false });
    expect(everyInput.message).toContain('property "nope" does not exist (PROPERTY_DOESNT_EXIST)');
    expect(everyInput.message).toContain('check-setup');
    expect(someInputs).toMatchObject({ kind: 'permanent', splittable: true });
    expect(someInputs.message).not.toContain('check-setup');
    expect(unknownInputs).toMatchObject({ splittable: true });
  });

  it('waits about one second on a SECONDLY 429 (Retry-After when sent) and ten on TEN_SECONDLY_ROLLING', () => {
    const secondly = rateBody('SECONDLY', 'You have reached your secondly limit.');
    const headers = { 'x-hubspot-ratelimit-interval-milliseconds': '10000' };
    expect(classifyHubSpotError(apiError(429, secondly, headers))).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000, vendorCode: 'SECONDLY' });
    expect(classifyHubSpotError(apiError(429, secondly, { 'retry-after': '2' })).retryAfterMs).toBe(2000);
    expect(classifyHubSpotError(apiError(429, rateBody('TEN_SECONDLY_ROLLING', 'You have reached your ten_secondly_rolling limit.'), headers)).retryAfterMs).toBe(10_000);
  });

  it('retries a 5xx whose body is not JSON, keeping its status and a short excerpt', () => {
    const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>${'x'.repeat(5000)}</body></html>`;
    const e = classifyHubSpotError(new HubSpotUnreadableResponse(502, page, { 'content-type': 'application/json' }));
    expect(e).toMatchObject({ kind: 'transient', ambiguous: true, retryable: true, status: 502, vendorCode: 'UNREADABLE_RESPONSE' });
    expect(e.message).toContain('502 Bad Gateway');
    expect(e.message.length).toBeLessThan(400);
  });

  it('retries the SDK\'s own parse failure (a client without readableResponses) as transient and ambiguous', () => {
    let parseError: unknown;
    try {
      JSON.parse('<html><head><title>502 Bad Gateway</title></head></html>');
    } catch (err) {
      parseError = err;
    }
    expect(classifyHubSpotError(parseError)).toMatchObject({ kind: 'transient', ambiguous: true, vendorCode: 'UNREADABLE_RESPONSE' });
  });

  it.each([401, 403])('names the token variable and the scopes on %i', (status) => {
    const e = classifyHubSpotError(apiError(status, { message: 'nope', category: status === 401 ? 'INVALID_AUTHENTICATION' : 'MISSING_SCOPES' }));
    expect(e.kind).toBe('auth');
    expect(e.message).toContain('HUBSPOT_ACCESS_TOKEN');
    expect(e.message).toContain('crm.objects.contacts.write');
    expect(e.message).toContain('crm.schemas.contacts.read');
  });

  it('never carries a registered token, even when HubSpot echoes it', () => {
    registerSecret('pat-na1-unit-secret-0001');
    const e = classifyHubSpotError(apiError(401, { message: 'token pat-na1-unit-secret-0001 is invalid' }, { authorization: 'Bearer pat-na1-unit-secret-0001' }));
    expect(e.message).not.toContain('pat-na1-unit-secret-0001');
    expect(JSON.stringify(e)).not.toContain('pat-na1-unit-secret-0001');
  });

  it('returns a CrmError unchanged and wraps other library errors as permanent', () => {
    const crm = new CrmError('x', { vendor: 'hubspot', kind: 'transient' });
    expect(classifyHubSpotError(crm)).toBe(crm);
    expect(classifyHubSpotError(new ConfigError('bad'))).toMatchObject({ kind: 'permanent' });
    expect(classifyHubSpotError(new TypeError('boom'))).toMatchObject({ kind: 'permanent', ambiguous: false });
  });
});

describe('classifyHubSpotItemError', () => {
  it('makes a per-input validation error permanent with HubSpot message', () => {
    const e = classifyHubSpotItemError({ status: 'error', category: 'VALIDATION_ERROR', message: 'Property "x" does not exist' });
    expect(e).toMatchObject({ kind: 'permanent', vendorCode: 'VALIDATION_ERROR' });
    expect(e.message).toContain('Property "x" does not exist');
  });

  it('makes a per-input server error transient', () => {
    expect(classifyHubSpotItemError({ status: '503', message: 'unavailable' })).toMatchObject({ kind: 'transient', ambiguous: true });
    expect(classifyHubSpotItemError({ status: 'error', category: 'INTERNAL_ERROR', message: 'x' }).kind).toBe('transient');
  });
});

/**
 * HubSpot words `message` in the portal's language. These bodies are HubSpot's shapes with the
 * words in Portuguese (the detail list kept as JSON, as HubSpot sends it): each is classified as
 * its English twin is, by category, code, property name and context.
 */
describe('classifyHubSpotError on messages in another language', () => {
  const ptEmail = { isValid: false, message: 'O endereço de email ana@northwind não é válido', error: 'INVALID_EMAIL', name: 'email' };

  it.each([
    ['an English lead-in', `Property values were not valid: ${JSON.stringify([ptEmail])}`],
    ['a Portuguese lead-in', `Os valores das propriedades não eram válidos: ${JSON.stringify([ptEmail])}`],
    ['a lead-in with a bracket of its own', `Valores inválidos [1 de 1]: ${JSON.stringify([ptEmail])}`],
  ])('names the field of a Portuguese INVALID_EMAIL with %s: permanent, splittable, no pull hint (a pull cannot change it)', (_what, message) => {
    const e = classifyHubSpotError(apiError(400, { status: 'error', category: 'VALIDATION_ERROR', correlationId: 'c-pt', message }));
    expect(e).toMatchObject({ kind: 'permanent', retryable: false, splittable: true, vendorCode: 'INVALID_EMAIL', field: 'email', status: 400 });
    expect(e.message).toContain('refused email (INVALID_EMAIL: O endereço de email ana@northwind não é válido)');
    expect(e.message).not.toContain('crm-upsert schema pull');
    expect(refusedValuesOf(e)).toEqual([{ name: 'email', code: 'INVALID_EMAIL', message: ptEmail.message }]);
  });

  it('reads the refused field from `errors` when the message holds no list at all', () => {
    const body = { status: 'error', category: 'VALIDATION_ERROR', message: 'Os valores das propriedades não eram válidos', errors: [{ message: 'O endereço de email não é válido', code: 'INVALID_EMAIL', context: { propertyName: ['email'] } }] };
    expect(classifyHubSpotError(apiError(400, body))).toMatchObject({ vendorCode: 'INVALID_EMAIL', field: 'email', splittable: true });
    expect(classifyHubSpotItemError(body)).toMatchObject({ vendorCode: 'INVALID_EMAIL', field: 'email', kind: 'permanent' });
  });

  it('names the field of a Portuguese per-input (207) error', () => {
    const err = classifyHubSpotItemError({ status: 'error', category: 'VALIDATION_ERROR', message: `Os valores das propriedades não eram válidos: ${JSON.stringify([{ ...ptEmail, propertyValue: 'ana@northwind' }])}` });
    expect(err).toMatchObject({ kind: 'permanent', vendorCode: 'INVALID_EMAIL', field: 'email' });
    expect(err.message).toContain('email = "ana@northwind" (INVALID_EMAIL');
  });

  it('tells a Portuguese PROPERTY_DOESNT_EXIST every input sends from one only some send', () => {
    const body = { status: 'error', category: 'VALIDATION_ERROR', message: `Os valores das propriedades não eram válidos: ${JSON.stringify([{ isValid: false, message: 'A propriedade "nope" não existe', error: 'PROPERTY_DOESNT_EXIST', name: 'nope' }])}` };
    expect(classifyHubSpotError(apiError(400, body), { sentProperties: [['nope'], ['email', 'nope']] })).toMatchObject({ splittable: false });
    expect(classifyHubSpotError(apiError(400, body), { sentProperties: [['nope'], ['email']] })).toMatchObject({ splittable: true });
  });

  it('makes a Portuguese non-unique idProperty refusal a setup error by the idProperty it quotes, and nothing else one', () => {
    const body = { status: 'error', category: 'VALIDATION_ERROR', message: 'Não é possível atualizar/inserir pela propriedade não exclusiva ai_external_id' };
    expect(classifyHubSpotError(apiError(400, body), { idProperty: 'ai_external_id' })).toMatchObject({ kind: 'permanent', splittable: false });
    expect(classifyHubSpotError(apiError(400, body), { idProperty: 'ai_external' })).toMatchObject({ splittable: true });
    expect(classifyHubSpotError(apiError(400, { ...body, message: 'Entrada inválida' }), { idProperty: 'ai_external_id' })).toMatchObject({ splittable: true });
  });

  it('classifies a 429 by its policy name, not its words', () => {
    const daily = classifyHubSpotError(apiError(429, rateBody('DAILY', 'Você atingiu seu limite diário.')));
    expect(daily).toMatchObject({ kind: 'quota', retryable: false, vendorCode: 'DAILY' });
    const search = classifyHubSpotError(apiError(429, { status: 'error', message: 'Você atingiu seu limite por segundo.', errorType: 'RATE_LIMIT' }));
    expect(search).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000 });
    // English words do not make a quota of a 429 whose policy says otherwise.
    expect(classifyHubSpotError(apiError(429, rateBody('TEN_SECONDLY_ROLLING', 'You have reached your daily limit.')))).toMatchObject({ kind: 'rate_limited', retryAfterMs: 10_000 });
  });

  it('keeps a Portuguese OBJECT_NOT_FOUND and an invalid association permanent, and a server error retryable', () => {
    expect(classifyHubSpotItemError({ status: 'error', category: 'OBJECT_NOT_FOUND', message: 'Não foi possível obter alguns objetos CONTACT; eles podem ter sido excluídos.', context: { ids: ['7'] } })).toMatchObject({ kind: 'permanent', vendorCode: 'OBJECT_NOT_FOUND' });
    expect(classifyHubSpotItemError({ status: 'error', category: 'VALIDATION_ERROR', message: 'Uma ou mais associações são inválidas', context: { INVALID_OBJECT_IDS: ['CONTACT=424242 não é válido'] } })).toMatchObject({ kind: 'permanent', retryable: false });
    expect(classifyHubSpotItemError({ status: '500', category: 'INTERNAL_ERROR', message: 'Erro interno' })).toMatchObject({ kind: 'transient', retryable: true });
  });
});
