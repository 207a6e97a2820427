import { isQualifiedName, isValidLabelValue } from '../validation/names.js';
import type { LabelSelector, LabelSelectorRequirement } from './label-selector.js';

/**
 * A label selector as kubectl takes it (`-l env=prod,tier!=cache,team in (a,b),!legacy`), turned
 * into the LabelSelector object an API field holds: Kubernetes' labels.Parse (lexer, grammar,
 * NewRequirement's checks), then metav1.ParseToLabelSelector (`=`/`==` to matchLabels, `!=` to
 * NotIn, the rest to matchExpressions; `>` and `<` refused, as a LabelSelector has no such
 * operator). Requirements keep the order they were written in; the empty string selects
 * everything (`{}`). A second `=` on a key already in matchLabels becomes an `In` expression,
 * so that `a=1,a=2` keeps meaning "both" instead of the last one silently winning.
 */
export type ParsedLabelSelector = { readonly ok: true; readonly selector: LabelSelector } | { readonly ok: false; readonly error: string };

type Token =
  | { readonly kind: 'identifier'; readonly text: string }
  | { readonly kind: 'operator'; readonly text: '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin' }
  | { readonly kind: '!' | '(' | ')' | ',' | 'end'; readonly text: string };

/** Longest first, so `!=` is never read as `!` then `=`. */
const SYMBOLS = ['!=', '==', '=', '!', '(', ')', ',', '>', '<'] as const;
const SPECIAL = /[=!(),<>]/;
const WHITESPACE = /[ \t\r\n]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (WHITESPACE.test(text[i] as string)) {
      i++;
      continue;
    }
    const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
    if (symbol) {
      i += symbol.length;
      tokens.push(
        symbol === '!' || symbol === '(' || symbol === ')' || symbol === ','
          ? { kind: symbol, text: symbol }
          : { kind: 'operator', text: symbol },
      );
      continue;
    }
    let end = i;
    while (end < text.length && !WHITESPACE.test(text[end] as string) && !SPECIAL.test(text[end] as string)) end++;
    const word = text.slice(i, end);
    i = end;
    // As in Kubernetes' lexer, `in` and `notin` are keywords wherever they stand (a key cannot be named so).
    tokens.push(word === 'in' || word === 'notin' ? { kind: 'operator', text: word } : { kind: 'identifier', text: word });
  }
  tokens.push({ kind: 'end', text: 'end of string' });
  return tokens;
}

class SelectorSyntaxError extends Error {}

function fail(message: string): never {
  throw new SelectorSyntaxError(message);
}

/** Reads requirements off the tokens, Kubernetes' grammar: `requirement (',' requirement)*`, or nothing. */
class Reader {
  private at = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  peek(): Token {
    return this.tokens[this.at] as Token;
  }

  next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.at++;
    return token;
  }

  /** In a value position a keyword is only a word: `env in (in)` is allowed. */
  nextValue(): Token {
    const token = this.next();
    return token.kind === 'operator' && (token.text === 'in' || token.text === 'notin') ? { kind: 'identifier', text: token.text } : token;
  }

  peekValue(): Token {
    const token = this.peek();
    return token.kind === 'operator' && (token.text === 'in' || token.text === 'notin') ? { kind: 'identifier', text: token.text } : token;
  }
}

function parseRequirement(reader: Reader): LabelSelectorRequirement | { readonly key: string; readonly equals: string } {
  const first = reader.next();
  if (first.kind === '!') {
    const key = reader.next();
    if (key.kind !== 'identifier') fail(`found '${key.text}', expected: identifier`);
    return requirement(key.text, 'DoesNotExist', []);
  }
  const key = first.text;
  const after = reader.peek();
  if (after.kind === ',' || after.kind === 'end') return requirement(key, 'Exists', []);
  const operator = reader.next();
  if (operator.kind !== 'operator') fail(`found '${operator.text}', expected: =, !=, ==, in, notin`);
  switch (operator.text) {
    case 'in':
    case 'notin':
      return requirement(key, operator.text === 'in' ? 'In' : 'NotIn', parseValueSet(reader));
    case '>':
    case '<':
      return fail(`${JSON.stringify(operator.text === '>' ? 'gt' : 'lt')} isn't supported in label selectors`);
    default: {
      const value = parseExactValue(reader);
      if (operator.text === '!=') return requirement(key, 'NotIn', [value]);
      checkKey(key);
      checkValue(key, value);
      return { key, equals: value };
    }
  }
}

/** `(a,b)`: a set (sorted, without repeats); `(,a)` and `(a,)` hold the empty value, as in Kubernetes. */
function parseValueSet(reader: Reader): string[] {
  const open = reader.next();
  if (open.kind !== '(') fail(`found '${open.text}', expected: '('`);
  const values = new Set<string>();
  for (;;) {
    const token = reader.nextValue();
    if (token.kind === 'identifier') {
      values.add(token.text);
      const after = reader.peekValue();
      if (after.kind === ')') break;
      if (after.kind !== ',') fail(`found '${after.text}', expected: ',' or ')'`);
      continue;
    }
    if (token.kind === ',') {
      if (values.size === 0) values.add('');
      const after = reader.peekValue();
      if (after.kind === ')') {
        values.add('');
        break;
      }
      if (after.kind === ',') {
        reader.next();
        values.add('');
      }
      continue;
    }
    fail(`found '${token.text}', expected: ',', or identifier`);
  }
  reader.next(); // the closing parenthesis, peeked above
  return [...values].sort();
}

/** The value after `=`, `==` or `!=`: a word, or nothing (`env=` is "env is empty"). */
function parseExactValue(reader: Reader): string {
  const token = reader.peekValue();
  if (token.kind === ',' || token.kind === 'end') return '';
  reader.nextValue();
  if (token.kind !== 'identifier') fail(`found '${token.text}', expected: identifier`);
  return token.text;
}

function checkKey(key: string): void {
  const problems = isQualifiedName(key);
  if (problems.length > 0) fail(`invalid label key ${JSON.stringify(key)}: ${problems.join('; ')}`);
}

function checkValue(key: string, value: string): void {
  const problems = isValidLabelValue(value);
  if (problems.length > 0) fail(`invalid label value: ${JSON.stringify(value)}: at key: ${JSON.stringify(key)}: ${problems.join('; ')}`);
}

/** NewRequirement's checks: a qualified key, label values, and values only where the operator takes them. */
function requirement(key: string, operator: LabelSelectorRequirement['operator'], values: string[]): LabelSelectorRequirement {
  checkKey(key);
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) fail("for 'in', 'notin' operators, values set can't be empty");
  for (const value of values) checkValue(key, value);
  return values.length > 0 ? { key, operator, values } : { key, operator };
}

export function parseLabelSelector(text: string): ParsedLabelSelector {
  const reader = new Reader(tokenize(text));
  const matchLabels: Record<string, string> = {};
  const matchExpressions: LabelSelectorRequirement[] = [];
  try {
    if (reader.peek().kind !== 'end') {
      for (;;) {
        const start = reader.peek();
        if (start.kind !== 'identifier' && start.kind !== '!') fail(`found '${start.text}', expected: !, identifier, or 'end of string'`);
        const parsed = parseRequirement(reader);
        if (!('equals' in parsed)) matchExpressions.push(parsed);
        else if (Object.hasOwn(matchLabels, parsed.key))
          matchExpressions.push({ key: parsed.key, operator: 'In', values: [parsed.equals] });
        else matchLabels[parsed.key] = parsed.equals;
        const separator = reader.next();
        if (separator.kind === 'end') break;
        if (separator.kind !== ',') fail(`found '${separator.text}', expected: ',' or 'end of string'`);
        if (reader.peek().kind === 'end') fail(`found 'end of string', expected: identifier after ','`);
      }
    }
  } catch (error) {
    if (error instanceof SelectorSyntaxError) return { ok: false, error: `unable to parse requirement: ${error.message}` };
    throw error;
  }
  return {
    ok: true,
    selector: {
      ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
      ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
    },
  };
}
