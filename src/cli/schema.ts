/** `crm-upsert schema`: the action JSON Schema (draft 2020-12), for LLM tool definitions. */
import { actionJsonSchema } from '../../schemas/action.js';
import { ExitCode } from './exit.js';

export function schemaCommand(): number {
  process.stdout.write(`${JSON.stringify(actionJsonSchema(), null, 2)}\n`);
  return ExitCode.ok;
}
