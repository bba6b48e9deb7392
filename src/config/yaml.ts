import {
  CST,
  isAlias,
  Lexer,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  visit,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import type { ConfigIssue, PathKey } from './issues.js';

/**
 * The YAML document under the schema: the limits checked before and after it is parsed (nodes,
 * depth, aliases), keys given twice, and the line of a path in it.
 */

/** YAML aliases resolved at most (each counted once per use, as the yaml library counts them). */
export const MAX_ALIASES = 100;

/**
 * The most YAML nodes (keys, values, lists, mappings, list items) a file may hold (docs/config.md,
 * "Limits"): a thousand cameras take about 20,000. The YAML parser keeps some 1.5 KB for each, so
 * a 100,000-point mask cost 500 MB to refuse (at this limit, about 150 MB); they are counted first, by the lexer, which keeps
 * nothing.
 */
export const MAX_NODES = 50_000;

/** The token types of the lexer that each begin a node. */
const NODE_TOKENS = new Set<string | null>([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'flow-seq-start',
  'flow-map-start',
  'seq-item-ind',
  'alias',
]);

/** The lexer's markers, which stand for no text of the file. */
const MARKERS = new Set([CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);

/** The line where the file's nodes pass MAX_NODES, or undefined while they do not. */
export function tooManyNodes(text: string): { line: number } | undefined {
  let nodes = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (NODE_TOKENS.has(CST.tokenType(token)) && ++nodes > MAX_NODES) {
      let line = 1;
      for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
      return { line };
    }
    if (!MARKERS.has(token)) offset += token.length;
  }
  return undefined;
}

/** Mappings and lists inside one another at most this deep (a config needs about 8). */
export const MAX_DEPTH = 64;

/**
 * Where the document nests deeper than MAX_DEPTH, or undefined when it does not. Walked with a stack of
 * its own: the yaml library's recursive walks overflow Node's stack on a deep enough file.
 */
export function tooDeep(doc: Document, lc: LineCounter): { line?: number } | undefined {
  const stack: [unknown, number][] = [[doc.contents, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth >= MAX_DEPTH) return { line: node.range ? lc.linePos(node.range[0]).line : undefined };
    for (const item of node.items)
      if (isPair(item)) stack.push([item.key, depth + 1], [item.value, depth + 1]);
      else stack.push([item, depth + 1]);
  }
  return undefined;
}

/** A mapping's pairs by key, built once per mapping so that locating n issues stays linear. */
const pairsByKey = new WeakMap<YAMLMap, Map<string, Pair>>();
function pairOf(map: YAMLMap, key: PathKey): Pair | undefined {
  let index = pairsByKey.get(map);
  if (!index) {
    index = new Map();
    for (const p of map.items) if (isPair(p) && isScalar(p.key)) index.set(String(p.key.value), p);
    pairsByKey.set(map, index);
  }
  return index.get(String(key));
}

/** The line of the node at `path`, or of its nearest ancestor that exists (`exact`: or undefined). */
export function lineOf(
  doc: Document,
  lc: LineCounter,
  path: readonly PathKey[],
  atKey = false,
  exact = false,
): number | undefined {
  let node: Node | null | undefined = doc.contents;
  let line = node?.range ? lc.linePos(node.range[0]).line : undefined;
  for (const [depth, key] of path.entries()) {
    if (isMap(node)) {
      const pair = pairOf(node, key);
      if (!pair) return exact ? undefined : line;
      const keyNode = pair.key as Node;
      if (keyNode.range) line = lc.linePos(keyNode.range[0]).line;
      if (atKey && depth === path.length - 1) break;
      node = pair.value as Node | null;
      if (node?.range) line = lc.linePos(node.range[0]).line;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key] as Node | undefined;
      if (!node) return exact ? undefined : line;
      if (node.range) line = lc.linePos(node.range[0]).line;
    } else return exact ? undefined : line;
  }
  return line;
}

/**
 * Keys given twice in one mapping, found with one set per mapping: the yaml library's own
 * `uniqueKeys` compares each key with every earlier one, which takes minutes for 100,000 cameras.
 */
export function duplicateKeys(doc: Document, lc: LineCounter): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Map<string, number | undefined>();
      for (const p of map.items) {
        if (!isScalar(p.key)) {
          const key = p.key as Node | null;
          issues.push({
            path: '',
            line: key?.range ? lc.linePos(key.range[0]).line : undefined,
            message: 'a key must be a plain name, not a list or a mapping',
          });
          continue;
        }
        const key = String(p.key.value);
        const line = p.key.range ? lc.linePos(p.key.range[0]).line : undefined;
        if (seen.has(key)) {
          const first = seen.get(key);
          issues.push({
            path: '',
            line,
            message: `'${key}' is given twice in one mapping${first ? ` (first on line ${first})` : ''}`,
          });
        } else seen.set(key, line);
      }
    },
  });
  return issues;
}

/** The line of the first alias (`*name`) in the document, where an alias bomb is reported. */
export function firstAliasLine(doc: Document, lc: LineCounter): number | undefined {
  let line: number | undefined;
  visit(doc, {
    Alias(_, node) {
      if (isAlias(node) && node.range) line = lc.linePos(node.range[0]).line;
      return visit.BREAK;
    },
  });
  return line;
}
