import { describe, expect, it } from 'vitest';
import type { FieldDefinition, FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { compareFieldDefinitions, DriftKind, listValues, type DriftOptions } from '../../schemas/field-drift.js';

const fileOf = (fields: Record<string, FieldDefinition>, object = 'deal'): FieldDefinitionsFile => ({
  crm: 'salesforce', apiVersion: '60.0', pulledAt: '2026-11-01', objects: { [object]: fields },
});

const enumeration = (values: string[], extra: Partial<FieldDefinition> = {}): FieldDefinition => ({ type: 'enumeration', options: values.map((value) => ({ value, label: value.toUpperCase() })), ...extra });

/** The one drift of field `f` between `was` and `is`, or every drift when there are several. */
function drift(was: FieldDefinition | undefined, is: FieldDefinition | undefined, options: DriftOptions = {}) {
  return compareFieldDefinitions(fileOf(was ? { f: was } : {}), fileOf(is ? { f: is } : {}), options).map(({ kind, severity, values }) => ({ kind, severity, ...(values ? { values } : {}) }));
}

describe('compareFieldDefinitions', () => {
  it.each([
    ['a field gone from the CRM', { type: 'string' }, undefined, [{ kind: DriftKind.gone, severity: 'problem' }]],
    ['a field the file lacks', undefined, { type: 'number' }, [{ kind: DriftKind.added, severity: 'warning' }]],
    ['a type change', { type: 'string' }, enumeration(['a']), [{ kind: DriftKind.type, severity: 'problem' }]],
    ['a field read-only now', { type: 'string' }, { type: 'string', readOnly: true }, [{ kind: DriftKind.readOnly, severity: 'problem' }]],
    ['a field writable again', { type: 'string', readOnly: true }, { type: 'string' }, [{ kind: DriftKind.readOnly, severity: 'warning' }]],
    ['a shorter length', { type: 'string', maxLength: 255 }, { type: 'string', maxLength: 80 }, [{ kind: DriftKind.maxLength, severity: 'problem' }]],
    ['a length where there was none', { type: 'string' }, { type: 'string', maxLength: 80 }, [{ kind: DriftKind.maxLength, severity: 'problem' }]],
    ['a longer length', { type: 'string', maxLength: 80 }, { type: 'string', maxLength: 255 }, [{ kind: DriftKind.maxLength, severity: 'warning' }]],
    ['options removed from a restricted list', enumeration(['a', 'b', 'c']), enumeration(['a']), [{ kind: DriftKind.optionsRemoved, severity: 'problem', values: ['b', 'c'] }]],
    ['options removed from an unrestricted list', enumeration(['a', 'b'], { restricted: false }), enumeration(['a'], { restricted: false }), [{ kind: DriftKind.optionsRemoved, severity: 'warning', values: ['b'] }]],
    ['options added', enumeration(['a']), enumeration(['a', 'z', 'y']), [{ kind: DriftKind.optionsAdded, severity: 'warning', values: ['z', 'y'] }]],
    ['a list restricted now', enumeration(['a'], { restricted: false }), enumeration(['a'], { restricted: true }), [{ kind: DriftKind.restricted, severity: 'problem' }]],
    ['a list unrestricted now', enumeration(['a'], { restricted: true }), enumeration(['a'], { restricted: false }), [{ kind: DriftKind.restricted, severity: 'warning' }]],
    ['multi-select now single-select', enumeration(['a'], { multiple: true }), enumeration(['a']), [{ kind: DriftKind.multiple, severity: 'problem' }]],
    ['single-select now multi-select', enumeration(['a']), enumeration(['a'], { multiple: true }), [{ kind: DriftKind.multiple, severity: 'warning' }]],
    ['text typed as an email address now (the file lets more through)', { type: 'string' }, { type: 'email' }, [{ kind: DriftKind.type, severity: 'warning' }]],
    ['an email address typed as text now (the file is narrower)', { type: 'email' }, { type: 'string' }, [{ kind: DriftKind.type, severity: 'warning' }]],
    ['an email address typed as a number now', { type: 'email' }, { type: 'number' }, [{ kind: DriftKind.type, severity: 'problem' }]],
    ['stages that keep their pipeline now (a file pulled before)', enumeration(['a']), { ...enumeration(['a']), pipelineField: 'pipeline', options: [{ value: 'a', label: 'A', pipeline: 'default' }] },
      [{ kind: DriftKind.pipelines, severity: 'warning' }]],
    ['nothing changed (labels and order aside)', enumeration(['a', 'b']), { type: 'enumeration', options: ['b', { value: 'a', label: 'Other label' }] }, []],
  ] as const)('reports %s', (_name, was, is, expected) => {
    expect(drift(was as FieldDefinition | undefined, is as FieldDefinition | undefined)).toEqual(expected);
  });

  it('tells an option now inactive from a removed one: a problem where the CRM refuses it, a warning where it still accepts it', () => {
    const was = enumeration(['a', 'b', 'c']);
    const is = enumeration(['a'], { restricted: true });

    const refused = drift(was, is, { inactive: { deal: { f: { values: ['b'], refused: true } } } });
    const accepted = drift(was, is, { inactive: { deal: { f: { values: ['b'], refused: false } } } });

    expect(refused).toEqual([
      { kind: DriftKind.optionsRemoved, severity: 'problem', values: ['c'] },
      { kind: DriftKind.optionsInactive, severity: 'problem', values: ['b'] },
    ]);
    expect(accepted[1]).toEqual({ kind: DriftKind.optionsInactive, severity: 'warning', values: ['b'] });
  });

  it('reports an option hidden since the pull, and one shown again, as warnings (HubSpot takes a hidden value)', () => {
    const opt = (value: string, hidden = false) => ({ value, label: value.toUpperCase(), ...(hidden ? { hidden: true } : {}) });
    const was: FieldDefinition = { type: 'enumeration', options: [opt('a'), opt('b'), opt('c', true), opt('d', true)] };
    const is: FieldDefinition = { type: 'enumeration', options: [opt('a'), opt('b', true), opt('c'), opt('d', true), opt('e', true)] };
    const drifts = compareFieldDefinitions(fileOf({ f: was }), fileOf({ f: is }));
    expect(drifts.map(({ kind, severity, values }) => ({ kind, severity, values }))).toEqual([
      { kind: DriftKind.optionsInactive, severity: 'warning', values: ['b'] },
      { kind: DriftKind.optionsShown, severity: 'warning', values: ['c'] },
      // A hidden option the file lacks: the file refuses its value, the CRM takes it.
      { kind: DriftKind.optionsAdded, severity: 'warning', values: ['e'] },
    ]);
    expect(drifts[0]!.detail).toBe('1 option now hidden or inactive in the CRM: b (the CRM still accepts it in a write)');
    expect(drifts[1]!.detail).toBe('1 option shown again in the CRM: c (the file marks it hidden: tool schemas still leave it out)');
    // Removing a hidden option from a restricted list is still a removal the CRM refuses.
    expect(drift(was, { type: 'enumeration', options: [opt('a'), opt('b'), opt('c', true)] })).toEqual([{ kind: DriftKind.optionsRemoved, severity: 'problem', values: ['d'] }]);
  });

  it('reports a type change alone, not the option and length changes it implies', () => {
    expect(drift(enumeration(['a'], { multiple: true }), { type: 'string', maxLength: 10 })).toEqual([{ kind: DriftKind.type, severity: 'problem' }]);
  });

  it('reports every change of one field', () => {
    const result = drift(enumeration(['a', 'b']), enumeration(['a', 'c'], { readOnly: true }));

    expect(result.map((d) => d.kind)).toEqual([DriftKind.readOnly, DriftKind.optionsRemoved, DriftKind.optionsAdded]);
  });

  it('names the first 20 values and how many more in the detail', () => {
    const many = Array.from({ length: 23 }, (_, i) => `v${i + 1}`);

    const [removed] = compareFieldDefinitions(fileOf({ f: enumeration(many) }), fileOf({ f: enumeration([]) }));

    expect(removed!.detail).toBe(`23 options removed in the CRM: ${many.slice(0, 20).join(', ')} and 3 more: the file still allows them, the CRM refuses them`);
    expect(removed!.values).toHaveLength(23);
    expect(listValues(['a', 'b'])).toBe('a, b');
  });

  it('compares only allowlisted file fields and objects the pull covers, naming object and field', () => {
    const file: FieldDefinitionsFile = { ...fileOf({ kept: { type: 'string' }, dropped: { type: 'string' } }), objects: { deal: { kept: { type: 'string' }, dropped: { type: 'string' } }, gone_object: { x: { type: 'string' } } } };
    const pulled = fileOf({ fresh: { type: 'date' } });

    const result = compareFieldDefinitions(file, pulled, { allowlist: { deal: ['kept', 'fresh'] } });

    expect(result.map(({ object, field, kind }) => ({ object, field, kind }))).toEqual([
      { object: 'deal', field: 'kept', kind: DriftKind.gone },
      { object: 'deal', field: 'fresh', kind: DriftKind.added },
    ]);
  });

  it('finds no drift between a file and the same definitions pulled again', () => {
    const fields: Record<string, FieldDefinition> = { stage: enumeration(['a', 'b'], { restricted: true }), name: { type: 'string', maxLength: 120 }, amount: { type: 'number' } };

    expect(compareFieldDefinitions(fileOf(fields), { ...fileOf(structuredClone(fields)), pulledAt: '2026-12-05' })).toEqual([]);
  });
});
