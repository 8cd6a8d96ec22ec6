import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** Application-generated, time-ordered ids (UUID v7), so inserts stay index-friendly. */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: string): boolean {
  return uuidValidate(value);
}
