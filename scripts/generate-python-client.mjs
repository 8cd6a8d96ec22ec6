#!/usr/bin/env node
/**
 * Generates the Python client (clients/python/kosh_client) from the OpenAPI document
 * (clients/typescript/openapi.json, written by `npm run generate:client`): TypedDicts for every
 * schema, request body and response, and a `KoshClient` with one method per operation over
 * urllib — the Python standard library only (Python 3.11+), so nothing is installed to use it.
 *
 *   node scripts/generate-python-client.mjs            writes the package
 *   node scripts/generate-python-client.mjs --check    exits 1 when the committed package differs
 *
 * Why not openapi-python-client: it is not installable from the registries CI reaches (docs/decisions/0311).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);

export function pascal(text) {
  return text
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

export function snake(text) {
  const s = text
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  const name = /^[0-9]/.test(s) ? `_${s}` : s;
  return PYTHON_KEYWORDS.has(name) ? `${name}_` : name;
}

const pyString = (text) => JSON.stringify(text);
const pyLiteral = (value) => (value === null ? 'None' : value === true ? 'True' : value === false ? 'False' : JSON.stringify(value));

/** A schema as a Python type expression; `named` collects inline objects that get a TypedDict of their own. */
function typeOf(schema, hint, named, depth = 0) {
  if (!schema || typeof schema !== 'object') return 'Any';
  if (schema.$ref) return pyString(schema.$ref.split('/').pop());
  if (schema.const !== undefined) return `Literal[${pyLiteral(schema.const)}]`;
  if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map(pyLiteral).join(', ')}]`;
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) {
    const members = [...new Set(union.map((s, i) => typeOf(s, `${hint}${i}`, named, depth)))];
    if (members.length === 1) return members[0];
    const rest = members.filter((m) => m !== 'None');
    if (rest.length < members.length) return `Optional[${rest.length === 1 ? rest[0] : `Union[${rest.join(', ')}]`}]`;
    return `Union[${members.join(', ')}]`;
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return typeOf(schema.allOf[0], hint, named, depth);
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  const mapped = type.map((t) => {
    switch (t) {
      case 'string':
        return schema.format === 'binary' ? 'bytes' : 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `List[${typeOf(schema.items, `${hint}Item`, named, depth + 1)}]`;
      case 'object':
        if (schema.properties && Object.keys(schema.properties).length > 0 && depth < 3) {
          named.push({ name: hint, schema });
          return pyString(hint);
        }
        if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
          return `Dict[str, ${typeOf(schema.additionalProperties, `${hint}Value`, named, depth + 1)}]`;
        return 'Dict[str, Any]';
      default:
        return schema.properties ? (named.push({ name: hint, schema }), pyString(hint)) : 'Any';
    }
  });
  if (mapped.length === 1) return mapped[0];
  const rest = mapped.filter((m) => m !== 'None');
  const inner = rest.length === 1 ? rest[0] : `Union[${rest.join(', ')}]`;
  return rest.length < mapped.length ? `Optional[${inner}]` : inner;
}

/** One TypedDict (functional form: any key, keywords included); optional keys are NotRequired. */
function typedDict(name, schema, named) {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([key, prop]) => {
    const type = typeOf(prop, `${name}${pascal(key)}`, named, 1);
    return `        ${pyString(key)}: ${required.has(key) ? type : `NotRequired[${type}]`},`;
  });
  const doc = schema.description ? `# ${schema.description.replace(/\s+/g, ' ').slice(0, 200)}\n` : '';
  return `${doc}${name} = TypedDict(\n    ${pyString(name)},\n    {\n${fields.join('\n')}\n    },\n)\n`;
}

function operationsOf(document) {
  const ops = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !op.responses || !op.operationId) continue;
      ops.push({ path, method: method.toUpperCase(), op });
    }
  }
  return ops.sort((a, b) => a.op.operationId.localeCompare(b.op.operationId));
}

function successOf(op) {
  const code = Object.keys(op.responses).find((c) => /^2/.test(c));
  const response = code ? op.responses[code] : undefined;
  const content = response?.content ?? {};
  if (content['application/json']) return { kind: 'json', schema: content['application/json'].schema };
  if (content['application/pdf']) return { kind: 'bytes' };
  if (content['text/csv']) return { kind: 'text' };
  return { kind: 'none' };
}

export function generate(document) {
  const named = [];
  const models = [];
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    if (schema.type === 'object' || schema.properties) models.push(typedDict(name, schema, named));
    else models.push(`${name} = ${typeOf(schema, `${name}Value`, named, 1)}\n`);
  }
  const methods = [];
  for (const { path, method, op } of operationsOf(document)) {
    const name = snake(op.operationId);
    const base = pascal(op.operationId);
    const params = (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query');
    const pathParams = params.filter((p) => p.in === 'path');
    const queryParams = params.filter((p) => p.in === 'query');
    const body = op.requestBody?.content?.['application/json']?.schema;
    let bodyType = null;
    if (body) bodyType = typeOf(body, `${base}Body`, named, 0);
    const success = successOf(op);
    let returns = 'None';
    if (success.kind === 'json') returns = typeOf(success.schema, `${base}Response`, named, 0);
    if (success.kind === 'bytes') returns = 'bytes';
    if (success.kind === 'text') returns = 'str';
    const args = ['self'];
    for (const p of pathParams) args.push(`${snake(p.name)}: str`);
    if (body) args.push(op.requestBody.required ? `body: ${bodyType}` : `body: Optional[${bodyType}] = None`);
    const kw = [];
    for (const p of queryParams) kw.push(`${snake(p.name)}: Optional[${typeOf(p.schema, `${base}${pascal(p.name)}`, named, 1)}] = None`);
    if (method !== 'GET') kw.push('idempotency_key: Optional[str] = None');
    if (kw.length > 0) args.push('*', ...kw);
    const summary = (op.summary ?? op.operationId).replace(/\s+/g, ' ').replace(/"""/g, "'''");
    const pathExpr = pathParams.reduce((p, param) => p.replace(`{${param.name}}`, `{_quote(${snake(param.name)})}`), path);
    const query = queryParams.map((p) => `${pyString(p.name)}: ${snake(p.name)}`).join(', ');
    const call = [
      `${pyString(method)}`,
      pathParams.length ? `f${pyString(pathExpr)}` : pyString(path),
      ...(queryParams.length ? [`query={${query}}`] : []),
      ...(body ? ['body=body'] : []),
      ...(method !== 'GET' ? ['idempotency_key=idempotency_key'] : []),
      `expect=${pyString(success.kind)}`,
    ].join(', ');
    methods.push(
      `    def ${name}(${args.join(', ')}) -> ${returns}:\n        """${summary} (${method} ${path})"""\n        return self._request(${call})  # type: ignore[no-any-return]\n`,
    );
  }
  // Inline objects found while typing operations and schemas: each once, named by where it was met.
  const seen = new Set(Object.keys(document.components?.schemas ?? {}));
  const inline = [];
  for (let i = 0; i < named.length; i += 1) {
    const { name, schema } = named[i];
    if (seen.has(name)) continue;
    seen.add(name);
    inline.push(typedDict(name, schema, named));
  }
  const header = `# Generated by scripts/generate-python-client.mjs from the Kosh OpenAPI document (version ${document.info.version}).\n# Do not edit: run \`npm run generate:client\`.\n`;
  const typesPy = `${header}from __future__ import annotations

from typing import Any, Dict, List, Literal, NotRequired, Optional, TypedDict, Union

__all__ = [${[...Object.keys(document.components?.schemas ?? {}), ...inline.map((m) => /^(\w+) = /.exec(m.replace(/^#.*\n/, ''))[1])].map(pyString).join(', ')}]

${[...models, ...inline].join('\n')}`;
  const clientPy = `${header}from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from ._http import KoshError, Transport, _quote
from .types import *  # noqa: F401,F403 (the TypedDicts named in the signatures)

__all__ = ["KoshClient", "KoshError"]


class KoshClient(Transport):
    """The Kosh API: one method per operation. \`api_key\` is the tenant's secret key (sk_test_… or sk_live_…)."""

${methods.join('\n')}`;
  return { 'types.py': typesPy, 'client.py': clientPy };
}

const HTTP_PY = `# The transport of the generated client: urllib from the standard library, JSON in and out.
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, List, Mapping, Optional


def _quote(value: Any) -> str:
    return urllib.parse.quote(str(value), safe="")


class KoshError(Exception):
    """A refusal in Kosh's error envelope: \`status\`, \`code\`, \`message\`, \`reason\`, \`details\`, \`request_id\`."""

    def __init__(self, status: int, error: Mapping[str, Any]):
        self.status = status
        self.code: str = str(error.get("code", "error"))
        self.message: str = str(error.get("message", ""))
        self.reason: Optional[str] = error.get("reason")
        self.details: List[Dict[str, str]] = list(error.get("details") or [])
        self.request_id: Optional[str] = error.get("request_id")
        super().__init__(f"{status} {self.code}: {self.message}")


class Transport:
    def __init__(self, base_url: str, api_key: Optional[str] = None, *, timeout: float = 30.0, headers: Optional[Mapping[str, str]] = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.headers = dict(headers or {})

    def _request(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None, body: Any = None,
                 idempotency_key: Optional[str] = None, expect: str = "json") -> Any:
        url = self.base_url + path
        pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        headers = {"accept": "application/json", "user-agent": "kosh-python-client", **self.headers}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        if method not in ("GET", "HEAD"):
            # Every write is idempotent: a retry of the same call with the same key is answered once.
            headers["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
                if expect == "bytes":
                    return raw
                if expect == "text":
                    return raw.decode("utf-8")
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as refusal:
            raw = refusal.read()
            try:
                envelope = json.loads(raw)
            except ValueError:
                envelope = {}
            error = envelope.get("error") if isinstance(envelope, dict) else None
            raise KoshError(refusal.code, error if isinstance(error, dict) else {"message": raw.decode("utf-8", "replace")}) from None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
`;

const INIT_PY = `"""A typed Python client for the Kosh API, generated from its OpenAPI document (standard library only)."""
from ._http import KoshError
from .client import KoshClient

__all__ = ["KoshClient", "KoshError"]
`;

export function files(document) {
  const generated = generate(document);
  return {
    'kosh_client/__init__.py': INIT_PY,
    'kosh_client/_http.py': HTTP_PY,
    'kosh_client/types.py': generated['types.py'],
    'kosh_client/client.py': generated['client.py'],
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const document = JSON.parse(readFileSync(join(root, 'clients/typescript/openapi.json'), 'utf8'));
  const out = join(root, 'clients/python');
  let stale = false;
  for (const [file, text] of Object.entries(files(document))) {
    const target = join(out, file);
    if (process.argv.includes('--check')) {
      let current = '';
      try {
        current = readFileSync(target, 'utf8');
      } catch {
        /* missing */
      }
      if (current !== text) {
        console.error(`${file} is out of date: run npm run generate:client`);
        stale = true;
      }
    } else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
  process.exit(stale ? 1 : 0);
}
