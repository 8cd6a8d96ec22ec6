import { Ajv, type ErrorObject } from 'ajv';
import gstr1Schema from './gstr1-schema.json' with { type: 'json' };

/**
 * The GSTN offline tool's GSTR-1 JSON, as a JSON Schema kept in the repository (gstr1-schema.json,
 * decision 0361). Tests and the invariant harness validate every return Kosh builds against it.
 */
const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 6 });
const validate = ajv.compile(gstr1Schema);

/** The schema's complaints about a GSTR-1 JSON (`path: message`), none when it conforms. */
export function validateGstr1(json: unknown): string[] {
  if (validate(json)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'}: ${e.message}`);
}
