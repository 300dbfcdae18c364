/**
 * fakeSalesforce's `GET /sobjects/{name}/describe` body: the field properties check-setup and
 * the adapter's users read, in Salesforce's shapes (DescribeSObjectResult / Field, as jsforce
 * 3.10.16 types them). A lookup answers `type: 'reference'`, the sObjects it may hold in
 * `referenceTo` and its `relationshipName` (`AccountId` -> `Account`, `WhoId` -> `Who`,
 * custom `Partner__c` -> `Partner__r`); a lookup to several sObjects is `polymorphicForeignKey`.
 * `precision` and `scale` are a number field's digits in all and after the point, 0 elsewhere
 * (Opportunity Amount: currency(18, 2)).
 */
import type { FakeFieldOptions } from './salesforce-fake-references.js';
import { lengthOf, type FakeValueRules } from './salesforce-fake-values.js';

/** A field as the org defines it. */
export interface DescribedField extends Required<Pick<FakeFieldOptions, 'type' | 'externalId' | 'unique' | 'caseSensitive' | 'required' | 'createable' | 'updateable'>>, Omit<FakeValueRules, 'type'> {
  name: string;
  referenceTo: string[];
  defaultValue?: string;
  precision?: number;
  scale?: number;
}

const isPicklist = (f: DescribedField) => f.type === 'picklist' || f.type === 'multipicklist' || f.type === 'combobox';

const relationshipOf = (f: DescribedField): string | null => {
  if (f.type !== 'reference') return null;
  if (f.name.endsWith('__c')) return `${f.name.slice(0, -3)}__r`;
  return f.name.endsWith('Id') ? f.name.slice(0, -2) : null;
};

export function describeSObject(name: string, fields: readonly DescribedField[]): Record<string, unknown> {
  return {
    name,
    label: name,
    custom: name.endsWith('__c'),
    createable: true,
    updateable: true,
    queryable: true,
    fields: fields.map((f) => ({
      name: f.name,
      label: f.label ?? f.name,
      type: f.type,
      externalId: f.externalId,
      unique: f.unique,
      caseSensitive: f.caseSensitive,
      idLookup: f.externalId || f.name === 'Id',
      nillable: !f.required && f.name !== 'Id',
      createable: f.createable,
      updateable: f.updateable,
      length: lengthOf(f),
      precision: f.precision ?? 0,
      scale: f.scale ?? 0,
      picklistValues: isPicklist(f)
        ? (f.picklistValues ?? []).map((p) => ({ active: p.active !== false, defaultValue: p.defaultValue ?? p.value === f.defaultValue, label: p.label ?? p.value, validFor: null, value: p.value }))
        : [],
      restrictedPicklist: isPicklist(f) && f.restrictedPicklist === true,
      dependentPicklist: false,
      referenceTo: f.referenceTo,
      relationshipName: relationshipOf(f),
      polymorphicForeignKey: f.referenceTo.length > 1,
      cascadeDelete: false,
    })),
  };
}
