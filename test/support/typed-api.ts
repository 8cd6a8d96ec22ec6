/**
 * The tests' HTTP helper typed against the generated client's schema (clients/typescript/src/schema.d.ts,
 * `npm run generate:client`), like openapi-fetch: the path is a key of `paths` and the method one that
 * path has; path parameters, query, request body and the 2xx JSON answer are the operation's types.
 * A body the OpenAPI document would refuse (a missing field, a field it does not take, a wrong type)
 * fails `tsc`, not only the request.
 *
 *   const res = await tenant.http.POST('/v1/invoices/{id}/finalize', { path: { id } });
 *   res.body.data.status; // typed: the Invoice schema
 *   res.error?.code;      // typed: the Error envelope of a 4xx/5xx
 */
import type { components, paths } from '../../clients/typescript/src/schema.js';
import type { ApiResponse } from './harness.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The paths that have operation `M`. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];

type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

type PathParams<O> = O extends { parameters: { path: infer X } } ? X : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type JsonBody<C> = C extends { content: { 'application/json': infer B } } ? B : never;

type BodyInit<O> = O extends { requestBody: infer R }
  ? object extends JsonBody<R>
    ? { body?: JsonBody<R> }
    : { body: JsonBody<R> }
  : O extends { requestBody?: infer R }
    ? [JsonBody<R>] extends [never]
      ? { body?: never }
      : { body?: JsonBody<R> }
    : { body?: never };

/** What a call takes besides method and path. */
export type Init<O> = ([PathParams<O>] extends [never] ? { path?: never } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: never } : { query?: QueryParams<O> }) &
  BodyInit<O> & { headers?: Record<string, string> };

type Responses<O> = O extends { responses: infer R } ? R : never;
type SuccessStatus = 200 | 201 | 202 | 204;
/** The JSON body of the operation's 2xx answers. */
export type SuccessBody<O> = { [S in keyof Responses<O>]: S extends SuccessStatus ? JsonBody<Responses<O>[S]> : never }[keyof Responses<O>];

export type TypedResponse<O> = Omit<ApiResponse, 'body'> & {
  /** The 2xx JSON answer, as the operation's schema says (on a 4xx/5xx it holds the error envelope: check `status` or read `error`). */
  body: SuccessBody<O>;
  /** The error of a 4xx/5xx answer (its envelope's `error`); undefined on success. */
  error: components['schemas']['Error']['error'] | undefined;
};

type Call<M extends Method> = <P extends PathsWith<M>>(
  path: P,
  ...[init]: object extends Init<Operation<P, M>> ? [init?: Init<Operation<P, M>>] : [init: Init<Operation<P, M>>]
) => Promise<TypedResponse<Operation<P, M>>>;

export type TypedApi = { GET: Call<'get'>; POST: Call<'post'>; PUT: Call<'put'>; PATCH: Call<'patch'>; DELETE: Call<'delete'> };

type Send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResponse>;

/** The URL of `path` with its parameters filled in and the query appended. */
export function urlOf(path: string, params?: Record<string, unknown>, query?: Record<string, unknown>): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  }
  const qs = search.toString();
  return qs ? `${filled}?${qs}` : filled;
}

/** A typed client over an untyped `api(method, url, body, headers)` (a tenant's, or the unauthenticated one). */
export function typedApi(send: Send): TypedApi {
  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') =>
    async (path: string, init: { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string> } = {}) => {
      const res = await send(method, urlOf(path, init.path, init.query), init.body, init.headers);
      const error = res.status >= 400 ? (res.body as { error?: unknown } | undefined)?.error : undefined;
      return { ...res, error };
    };
  return { GET: call('GET'), POST: call('POST'), PUT: call('PUT'), PATCH: call('PATCH'), DELETE: call('DELETE') } as unknown as TypedApi;
}

/**
 * The `data` of a 2xx answer, for set-up steps that must succeed: any other answer throws with its
 * status and text. `const plan = await dataOf(acme.http.POST('/v1/plans', { body }));`
 */
export async function dataOf<B extends { data: unknown }>(request: Promise<{ status: number; text: string; body: B }>): Promise<B['data']> {
  const res = await request;
  if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
  return res.body.data;
}
