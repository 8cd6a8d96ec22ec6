/** Types of module-map.mjs (a plain script, so `npm run docs:modules` needs no compiler). */
export function moduleGraph(root?: string): Map<string, Set<string>>;
export function longestChain(graph: Map<string, Set<string>>): { depth: number; chain: string[] };
export function withModuleMap(text: string, graph?: Map<string, Set<string>>): string;
