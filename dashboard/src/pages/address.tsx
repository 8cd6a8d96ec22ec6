/**
 * Address fields (DESIGN §10: line1, line2, city, state code, postal code, country) and GSTIN
 * hints that apply the server's own rules (the same state list and check character), so a person
 * sees the problem before sending.
 */
import { useId, useState } from 'react';
import { describeGstinProblem, gstinProblem } from '../../../src/modules/tax/gstin.ts';
import { gstState, GST_STATE_CODES } from '../../../src/modules/tax/states.ts';
import { str } from '../ui.tsx';

export const GSTIN_PATTERN = '[0-9]{2}[A-Za-z0-9]{13}';

export type Address = {
  line1?: string | null;
  line2?: string | null;
  city?: string | null;
  state_code?: string | null;
  postal_code?: string | null;
  country?: string;
};

const STATE_OPTIONS: [string, string][] = GST_STATE_CODES.map((code) => [code, `${code} — ${gstState(code)?.name ?? code}`]);

/** The address typed in the form (fields named `address_*`), or undefined when every field is empty. */
export function addressOf(form: FormData): Address | undefined {
  const country = (str(form, 'address_country') ?? 'IN').toUpperCase();
  const address = {
    line1: str(form, 'address_line1') ?? null,
    line2: str(form, 'address_line2') ?? null,
    city: str(form, 'address_city') ?? null,
    state_code: str(form, 'address_state_code') ?? null,
    postal_code: str(form, 'address_postal_code') ?? null,
  };
  if (Object.values(address).every((v) => v === null) && country === 'IN') return undefined;
  return { ...address, country };
}

/** The same address for a route whose fields are strings or absent (the entity routes). */
export function addressWithoutNulls(address: Address | undefined): Record<string, string> | undefined {
  if (!address) return undefined;
  return Object.fromEntries(Object.entries(address).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

export function formatAddress(address: Address | null | undefined): string {
  if (!address) return '—';
  const state = address.state_code
    ? address.country === 'IN'
      ? `${gstState(address.state_code)?.name ?? ''} (${address.state_code})`
      : address.state_code
    : null;
  const parts = [address.line1, address.line2, address.city, [state, address.postal_code].filter(Boolean).join(' '), address.country];
  const text = parts.filter((p) => p && String(p).trim()).join(', ');
  return text || '—';
}

function Input({
  label,
  name,
  defaultValue,
  ...rest
}: {
  label: string;
  name: string;
  defaultValue?: string | null;
  autoComplete?: string;
  pattern?: string;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        defaultValue={defaultValue ?? ''}
        autoComplete={rest.autoComplete}
        pattern={rest.pattern}
        aria-describedby={rest.hint ? `${id}-hint` : undefined}
      />
      {rest.hint ? (
        <small id={`${id}-hint`} className="muted">
          {rest.hint}
        </small>
      ) : null}
    </div>
  );
}

/** The address block; for India the state is chosen from the GST state list (it decides the place of supply). */
export function AddressFields({ legend, value }: { legend: string; value?: Address | null }) {
  const id = useId();
  const [country, setCountry] = useState((value?.country ?? 'IN').toUpperCase());
  return (
    <fieldset className="address">
      <legend>{legend}</legend>
      <Input label="Address line 1" name="address_line1" defaultValue={value?.line1} autoComplete="address-line1" />
      <Input label="Address line 2" name="address_line2" defaultValue={value?.line2} autoComplete="address-line2" />
      <Input label="City" name="address_city" defaultValue={value?.city} autoComplete="address-level2" />
      {country === 'IN' ? (
        <div className="field">
          <label htmlFor={`${id}-state`}>State</label>
          <select id={`${id}-state`} name="address_state_code" defaultValue={value?.state_code ?? ''} aria-describedby={`${id}-state-hint`}>
            <option value="">—</option>
            {STATE_OPTIONS.map(([code, text]) => (
              <option key={code} value={code}>
                {text}
              </option>
            ))}
          </select>
          <small id={`${id}-state-hint`} className="muted">
            Decides the place of supply (CGST+SGST or IGST)
          </small>
        </div>
      ) : (
        <Input label="State or region" name="address_state_code" defaultValue={value?.state_code} autoComplete="address-level1" />
      )}
      <Input label="Postal code" name="address_postal_code" defaultValue={value?.postal_code} autoComplete="postal-code" />
      <div className="field">
        <label htmlFor={`${id}-country`}>Country (two letters)</label>
        <input
          id={`${id}-country`}
          name="address_country"
          value={country}
          maxLength={2}
          pattern="[A-Za-z]{2}"
          autoComplete="country"
          onChange={(e) => setCountry(e.target.value.toUpperCase())}
        />
      </div>
    </fieldset>
  );
}

/** A GSTIN field that checks the format and check character as it is typed (the server's rules). */
export function GstinField({ label = 'GSTIN', name = 'gstin', defaultValue }: { label?: string; name?: string; defaultValue?: string | null }) {
  const id = useId();
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        defaultValue={defaultValue ?? ''}
        maxLength={15}
        autoCapitalize="characters"
        aria-invalid={problem ? true : undefined}
        aria-describedby={`${id}-hint`}
        onChange={(e) => {
          const value = e.target.value.trim().toUpperCase();
          const found = value ? gstinProblem(value) : undefined;
          const message = found ? `GSTIN ${describeGstinProblem(found)}` : '';
          e.target.setCustomValidity(message);
          setProblem(message || null);
        }}
      />
      <small id={`${id}-hint`} className={problem ? 'error' : 'muted'}>
        {problem ?? '15 characters, for a registered business'}
      </small>
    </div>
  );
}
