/**
 * `crm-upsert check-setup` for Pipedrive: through the v2 fields endpoints, each record object's id
 * field must exist and be a `varchar` custom field (searchable, 255 characters at most: the exact
 * lookup relies on it), and every allowlisted field must exist; `create` adds a missing id field.
 * Notes and activities have no custom fields: their key travels as a text marker, nothing to check.
 */
import type { FieldDefinitionsFile } from '../../schemas/field-definitions.js';
import { ConfigError, CrmError, CrmErrorKind, redact } from '../../src/errors.js';
import { driftFailed, driftFindings } from '../kit/setup-drift.js';
import type { SetupFinding, SetupReport } from '../kit/vendor-cli.js';
import type { PipedriveAdapter } from './pipedrive-adapter.js';
import { isCustomFieldKey, PIPEDRIVE_TOKEN_ENV, type PipedriveConfig, type RecordEntity } from './pipedrive-config.js';
import { FIELDS_PATH, pullPipedriveFields, STANDARD_FIELDS, wireFieldIn, type PipedriveField } from './pipedrive-fields.js';

const plain = (err: unknown) => redact(err instanceof Error ? err.message : String(err)).replace(/^\[crm-upsert\]\s*(\[pipedrive\]\s*)?/, '');

/** A refused token ends the check: nothing else can be verified with it. */
function refuseAuth(err: unknown): void {
  if (err instanceof CrmError && err.kind === CrmErrorKind.auth) {
    throw new ConfigError(`auth failed: the token in ${PIPEDRIVE_TOKEN_ENV} was refused (${plain(err)}); set a current API token and run check-setup again`);
  }
}

export async function checkPipedriveSetup(section: PipedriveConfig, adapter: PipedriveAdapter, create: boolean): Promise<SetupReport> {
  const listed = new Map<string, Promise<PipedriveField[]>>();
  const fieldsOf = (entity: RecordEntity | 'activity') => {
    if (!listed.has(entity)) listed.set(entity, adapter.readFields(entity));
    return listed.get(entity)!;
  };
  const findings: SetupFinding[] = [];
  for (const [object, spec] of Object.entries(section.objects)) {
    if (spec.kind === 'activity') {
      findings.push({ object, target: spec.entity === 'note' ? 'notes.content' : 'activities.note', role: '(key marker)', status: 'info', detail: 'no custom fields exist on notes and activities: the action key travels in the text as "[crm-upsert key: …]"' });
      continue;
    }
    let fields: PipedriveField[];
    try {
      fields = await fieldsOf(spec.entity);
    } catch (err) {
      refuseAuth(err);
      findings.push({ object, target: FIELDS_PATH[spec.entity], role: '(object)', status: 'problem', detail: `listing its fields failed: ${plain(err)}`, fix: 'run check-setup again' });
      continue;
    }
    const id = fields.find((f) => f.field_code === spec.idField) ?? fields.find((f) => f.is_custom_field && f.field_name === spec.idField);
    const idFinding: SetupFinding = { object, target: `${spec.entity}.${spec.idField}`, role: '(varchar id field)', status: 'ok' };
    if (!id) {
      if (create && !isCustomFieldKey(spec.idField)) {
        try {
          const made = await adapter.request<{ data?: PipedriveField }>({ method: 'POST', path: FIELDS_PATH[spec.entity], body: { field_name: spec.idField, field_type: 'varchar' } });
          idFinding.status = 'created';
          idFinding.detail = `key ${made.data?.field_code ?? '(not answered)'}`;
          listed.delete(spec.entity);
        } catch (err) {
          refuseAuth(err);
          idFinding.status = 'problem';
          idFinding.detail = `creating it failed: ${plain(err)}`;
        }
      } else {
        idFinding.status = 'missing';
        idFinding.fix = isCustomFieldKey(spec.idField) ? `no ${spec.entity} field has this key: configure the id field by its name, then run check-setup --create` : 'run crm-upsert check-setup --create (or add a "Text" custom field of this name in Pipedrive)';
      }
    } else if (!id.is_custom_field || id.field_type !== 'varchar') {
      idFinding.status = 'problem';
      idFinding.detail = `it is a ${id.is_custom_field ? '' : 'standard '}${id.field_type} field; the exact lookup needs a varchar custom field (searchable, at most 255 characters)`;
      idFinding.fix = `point objects.${object}.idField at a varchar custom field (check-setup --create makes one under a new name)`;
    } else {
      idFinding.detail = `key ${id.field_code}`;
    }
    findings.push(idFinding);
    for (const name of spec.fields) {
      const known = STANDARD_FIELDS[spec.entity].has(name) || (() => {
        try {
          return wireFieldIn(fields, spec.entity, name) !== undefined;
        } catch {
          return false;
        }
      })();
      findings.push(known
        ? { object, target: `${spec.entity}.${name}`, role: '(allowlisted)', status: 'ok' }
        : { object, target: `${spec.entity}.${name}`, role: '(allowlisted)', status: 'missing', fix: `add the field in Pipedrive, or remove it from objects.${object}.fields` });
    }
  }
  return {
    findings,
    async fieldDrift(file: FieldDefinitionsFile, { fix }) {
      let pulled: FieldDefinitionsFile;
      try {
        pulled = await pullPipedriveFields(section, (entity) => fieldsOf(entity), new Date());
      } catch (err) {
        return [driftFailed(err)];
      }
      const allowlist = Object.fromEntries(Object.entries(section.objects).map(([name, spec]) => [name, spec.fields]));
      return driftFindings(file, pulled, { allowlist, fix, target: (object, field) => `${section.objects[object]!.entity}.${field}` });
    },
  };
}
