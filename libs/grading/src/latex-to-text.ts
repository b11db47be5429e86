// LaTeX to plain text, as pylatexenc 2.10's `LatexNodes2Text().latex_to_text()` renders it with its default
// context and flags (math_mode 'text', strict_latex_spaces 'macros', tolerant parsing). The cookbook's `_normalize`
// calls it on answers that still hold a backslash. Re-implemented from that library's documented behaviour and
// its macro table (latex-macro-table.ts); linear in the input (groups memoised by position), nesting capped where
// pylatexenc hits Python's recursion limit (which the cookbook swallows like any other exception).
import { ENVIRONMENT_ROWS, LatexRendering, MACRO_ROWS } from './latex-macro-table';
import { isPyAlpha, isPySpace, pyLen, pyStrip } from './python-text';

/** Thrown where pylatexenc raises; the cookbook then keeps the expression unconverted. */
export class LatexConversionError extends Error {}

/**
 * Thrown where the text would grow past the sizes below, which pylatexenc builds only after the cookbook's 1 s
 * grading timeout (safe_grade -> False): isEquivalent then says not equal; normalizeExpression keeps the input.
 */
export class LatexTooLargeError extends LatexConversionError {}

// Text that grows faster than the input: an accent marks every character of its argument, so k nested accents
// make 2^k characters; a matrix pads every cell to the widest one (cells x width); each display-math level
// indents every line of what it holds again (depth x lines) and every math level strips it again. An accent
// may mark this many characters, and all of them together may build this many.
const MAX_ACCENTED_CHARS = 100_000;
const MAX_RENDERED_CHARS = 4_000_000;

type ArgNode = LatexNode | null;
type LatexNode =
  | { kind: 'chars'; text: string }
  | { kind: 'comment'; postSpace: string }
  | { kind: 'group'; nodes: LatexNode[] }
  | { kind: 'macro'; name: string; args: ArgNode[]; postSpace: string; bare: boolean }
  | { kind: 'specials'; chars: string }
  | { kind: 'math'; display: boolean; nodes: LatexNode[] }
  | { kind: 'env'; name: string; nodes: LatexNode[] };

type Token =
  | { tok: 'char'; arg: string; pos: number; len: number; pre: string }
  | { tok: 'macro'; arg: string; pos: number; len: number; pre: string; post: string }
  | { tok: 'comment'; pos: number; len: number; pre: string; post: string }
  | { tok: 'open' | 'close'; arg: string; pos: number; len: number; pre: string }
  | { tok: 'math'; arg: string; display: boolean; pos: number; len: number; pre: string }
  | { tok: 'begin' | 'end'; arg: string; pos: number; len: number; pre: string }
  | { tok: 'specials'; arg: string; pos: number; len: number; pre: string };

class EndOfStream {
  constructor(readonly finalSpace: string) {}
}

const MACROS = new Map<string, { argspec: string | null; rendering: LatexRendering; noSpace: boolean }>(
  MACRO_ROWS.map(([name, argspec, rendering, noSpace]) => [name, { argspec, rendering, noSpace: noSpace === 1 }]),
);
const ENVIRONMENTS = new Map<string, { argspec: string | null; rendering: LatexRendering }>(
  ENVIRONMENT_ROWS.map(([name, argspec, rendering]) => [name, { argspec, rendering }]),
);
const SPECIALS: ReadonlyArray<readonly [string, string]> = [
  ['---', '\u2014'], ['--', '\u2013'], ['``', '\u201c'], ["''", '\u201d'], ['!`', '\u00a1'], ['?`', '\u00bf'],
  ['&', '   '], ['~', '\u00a0'],
];
const ACCENTS: Record<string, string> = {
  "'": '\u0301', '`': '\u0300', '"': '\u0308', c: '\u0327', '^': '\u0302', '~': '\u0303', H: '\u030b', k: '\u0328',
  '=': '\u0304', b: '\u0331', '.': '\u0307', d: '\u0323', r: '\u030a', u: '\u0306', v: '\u030c', vec: '\u20d7',
  dot: '\u0307', hat: '\u0302', check: '\u030c', breve: '\u0306', acute: '\u0301', grave: '\u0300', tilde: '\u0303',
  bar: '\u0305', ddot: '\u0308', not: '\u0338',
};
const MATH_STYLES: Record<string, readonly [number, number, Record<string, number>]> = {
  mathbf: [0x1d400, 0x1d41a, {}],
  mathit: [0x1d434, 0x1d44e, { h: 0x210e }],
  mathcal: [0x1d49c, 0x1d4b6, { B: 0x212c, E: 0x2130, F: 0x2131, H: 0x210b, I: 0x2110, L: 0x2112, M: 0x2133, R: 0x211b, e: 0x212f, g: 0x210a, o: 0x2134 }],
  mathscr: [0x1d49c, 0x1d4b6, { B: 0x212c, E: 0x2130, F: 0x2131, H: 0x210b, I: 0x2110, L: 0x2112, M: 0x2133, R: 0x211b, e: 0x212f, g: 0x210a, o: 0x2134 }],
  mathfrak: [0x1d504, 0x1d51e, { C: 0x212d, H: 0x210c, I: 0x2111, R: 0x211c, Z: 0x2128 }],
  mathbb: [0x1d538, 0x1d552, { C: 0x2102, H: 0x210d, N: 0x2115, P: 0x2119, Q: 0x211a, R: 0x211d, Z: 0x2124 }],
  mathsf: [0x1d5a0, 0x1d5ba, {}],
  mathtt: [0x1d670, 0x1d68a, {}],
};
const MATRIX_ENVS = new Set(['array', 'pmatrix', 'bmatrix', 'smallmatrix', 'psmallmatrix', 'bsmallmatrix']);
// Macros the table renders with a formatter (2), beyond ACCENTS and MATH_STYLES: the cases of `macro()` below,
// and those whose text is document metadata or a file's contents (nothing in an answer; \maketitle and \today
// would also read the clock). Environments rendered by a formatter: MATRIX_ENVS, any other is an equation.
const NAMED_MACRO_FORMATTERS = [
  '%', 'item', 'texorpdfstring', 'href', 'part', 'chapter', 'section', 'subsection', 'subsubsection', 'paragraph',
  'subparagraph', 'includegraphics', 'uebung', 'exercise', 'title', 'author', 'date', 'maketitle', 'input', 'include',
];
/** Every macro name `latexToText` has a formatter for (the names a table row may render with 2). */
export const FORMATTED_MACROS: ReadonlySet<string> = new Set([
  ...Object.keys(ACCENTS),
  ...Object.keys(MATH_STYLES),
  ...NAMED_MACRO_FORMATTERS,
]);
// Python's recursion limit (1000 frames) as pylatexenc spends it: about 4 frames per nested group and
// 5 + (argument spec length) + (optional arguments) per nested macro argument, measured on pylatexenc 2.10;
// the cookbook's own call stack takes the rest. Approximate by nature: it decides only nestings over ~120 deep.
const FRAME_BUDGET = 985;
const GROUP_FRAMES = 4;
const ENV_NAME = /^[\s]*\{([\p{L}\p{N}_* ._-]+)\}/u;

/** A finished `nodes` call: its result, and the most frames it held beyond those at its entry. */
type Parsed = { result: [LatexNode[], number]; peak: number };

class Walker {
  private frames = 0;
  /** the most frames held so far in the current `nodes` call (for the memo's recursion check) */
  private peak = 0;
  /**
   * `nodes` results by start position and stop: a macro whose arguments run into the end of the text is given
   * up and the text after it parsed again (as pylatexenc does), which re-enters the same groups; without the
   * memo each unclosed level doubles the work. A call's result does not depend on the frames held at its entry,
   * only whether it overflows the budget does, so that is checked again from the recorded peak.
   */
  private readonly memo = new Map<string, Parsed>();
  constructor(private readonly s: string) {}

  private enter(cost: number): void {
    this.frames += cost;
    if (this.frames > this.peak) this.peak = this.frames;
    if (this.frames > FRAME_BUDGET) throw new LatexConversionError('RecursionError: nesting too deep');
  }

  private codePointAt(pos: number): string {
    return String.fromCodePoint(this.s.codePointAt(pos) as number);
  }

  getToken(pos: number, opts: { brackets?: boolean; environments?: boolean; inDollarMath?: boolean } = {}): Token {
    const s = this.s;
    let space = '';
    while (pos < s.length && isPySpace(s[pos])) {
      space += s[pos];
      pos++;
      if (space.endsWith('\n\n')) return { tok: 'char', arg: '\n\n', pos: pos - 2, len: 2, pre: space.slice(0, -2) };
    }
    if (pos >= s.length) throw new EndOfStream(space);
    const c = s[pos];
    if (c === '\\') {
      if (pos + 1 >= s.length) throw new EndOfStream('');
      let macro = this.codePointAt(pos + 1);
      let i = 1 + macro.length;
      const alpha = isPyAlpha(macro);
      if (alpha) {
        while (pos + i < s.length) {
          const ch = this.codePointAt(pos + i);
          if (!isPyAlpha(ch)) break;
          macro += ch;
          i += ch.length;
        }
      }
      if (macro === '[' || macro === ']') return { tok: 'math', arg: '\\' + macro, display: true, pos, len: i, pre: space };
      if (macro === '(' || macro === ')') return { tok: 'math', arg: '\\' + macro, display: false, pos, len: i, pre: space };
      if (opts.environments !== false && (macro === 'begin' || macro === 'end')) {
        const m = ENV_NAME.exec(s.slice(pos + i, pos + i + 512));
        if (!m) return { tok: 'char', arg: '\\' + macro, pos, len: i, pre: space };
        return { tok: macro, arg: m[1], pos, len: i + m[0].length, pre: space };
      }
      let post = '';
      if (alpha) {
        while (pos + i < s.length && isPySpace(s[pos + i])) {
          post += s[pos + i];
          i++;
          if (post.endsWith('\n\n')) {
            post = post.slice(0, -2);
            i -= 2;
            break;
          }
        }
      }
      return { tok: 'macro', arg: macro, pos, len: i, pre: space, post };
    }
    if (c === '%') {
      const re = /(\n|\r|\n\r)(\s*)/gu;
      re.lastIndex = pos;
      const m = re.exec(s);
      if (!m) return { tok: 'comment', pos, len: s.length - pos, pre: space, post: '' };
      if (m[2].startsWith('\n') || m[2].startsWith('\r')) return { tok: 'comment', pos, len: m.index - pos, pre: space, post: '' };
      return { tok: 'comment', pos, len: m.index + m[0].length - pos, pre: space, post: m[0] };
    }
    if (c === '{' || (opts.brackets && c === '[')) return { tok: 'open', arg: c, pos, len: 1, pre: space };
    if (c === '}' || (opts.brackets && c === ']')) return { tok: 'close', arg: c, pos, len: 1, pre: space };
    if (s.startsWith('$$', pos) && !opts.inDollarMath) return { tok: 'math', arg: '$$', display: true, pos, len: 2, pre: space };
    if (c === '$') return { tok: 'math', arg: '$', display: false, pos, len: 1, pre: space };
    for (const [chars] of SPECIALS) {
      if (s.startsWith(chars, pos)) return { tok: 'specials', arg: chars, pos, len: chars.length, pre: space };
    }
    const ch = this.codePointAt(pos);
    return { tok: 'char', arg: ch, pos, len: ch.length, pre: space };
  }

  /** get_latex_nodes: nodes up to the given closing brace / math delimiter / end of environment. */
  nodes(pos: number, stop: { brace?: string; math?: string; env?: string } = {}, cost = 0): [LatexNode[], number] {
    const key = `${pos}|${stop.brace ?? ''}|${stop.math ?? ''}|${stop.env ?? ''}`;
    const base = this.frames;
    const known = this.memo.get(key);
    if (known) {
      this.enter(cost + known.peak);
      this.frames = base;
      return known.result;
    }
    const outerPeak = this.peak;
    this.peak = base;
    const result = this.parseNodes(pos, stop, cost);
    this.memo.set(key, { result, peak: this.peak - base - cost });
    this.peak = Math.max(outerPeak, this.peak);
    return result;
  }

  private parseNodes(pos: number, stop: { brace?: string; math?: string; env?: string }, cost: number): [LatexNode[], number] {
    this.enter(cost);
    const done = (): void => {
      this.frames -= cost;
    };
    const out: LatexNode[] = [];
    let chars = '';
    const flush = (): void => {
      if (chars) out.push({ kind: 'chars', text: chars });
      chars = '';
    };
    const inDollarMath = stop.math === '$';
    for (;;) {
      let tok: Token;
      try {
        tok = this.getToken(pos, { brackets: stop.brace === ']', inDollarMath });
      } catch (e) {
        if (e instanceof EndOfStream) {
          chars += e.finalSpace;
          flush();
          done();
          return [out, this.s.length];
        }
        throw e;
      }
      pos = tok.pos + tok.len;
      if (tok.tok === 'char') {
        chars += tok.pre + tok.arg;
        continue;
      }
      chars += tok.pre;
      if (tok.tok === 'close') {
        if (tok.arg === stop.brace) {
          flush();
          done();
          return [out, pos];
        }
        continue; // stray closing brace: ignored in tolerant mode
      }
      if (tok.tok === 'math') {
        if (stop.math !== undefined && tok.arg === stop.math) {
          flush();
          done();
          return [out, pos];
        }
        if (tok.arg === '\\)' || tok.arg === '\\]') continue;
        flush();
        const closer = tok.arg === '\\(' ? '\\)' : tok.arg === '\\[' ? '\\]' : tok.arg;
        const [inner, np] = this.nodes(pos, { math: closer }, GROUP_FRAMES);
        out.push({ kind: 'math', display: tok.display, nodes: inner });
        pos = np;
        continue;
      }
      if (tok.tok === 'end') {
        if (tok.arg === stop.env) {
          flush();
          done();
          return [out, pos];
        }
        continue;
      }
      flush();
      if (tok.tok === 'comment') out.push({ kind: 'comment', postSpace: tok.post });
      else if (tok.tok === 'open') {
        const [inner, np] = this.nodes(pos, { brace: tok.arg === '[' ? ']' : '}' }, GROUP_FRAMES);
        out.push({ kind: 'group', nodes: inner });
        pos = np;
      } else if (tok.tok === 'specials') out.push({ kind: 'specials', chars: tok.arg });
      else if (tok.tok === 'begin') {
        const spec = ENVIRONMENTS.get(tok.arg);
        let p = pos;
        if (spec?.argspec) {
          const parsed = this.args(p, spec.argspec, false);
          if (parsed) p = parsed[1];
        }
        const [inner, np] = this.nodes(p, { env: tok.arg }, GROUP_FRAMES);
        out.push({ kind: 'env', name: tok.arg, nodes: inner });
        pos = np;
      } else if (tok.tok === 'macro') {
        const spec = MACROS.get(tok.arg);
        let args: ArgNode[] = [];
        if (spec?.argspec) {
          const parsed = this.args(pos, spec.argspec, spec.noSpace);
          if (parsed) [args, pos] = parsed;
        }
        out.push({ kind: 'macro', name: tok.arg, args, postSpace: tok.post, bare: args.every((a) => a === null) });
      }
    }
  }

  /** MacroStandardArgsParser.parse_args; null where the stream ends inside the arguments. */
  private args(pos: number, argspec: string, noSpace: boolean): [ArgNode[], number] | null {
    const args: ArgNode[] = [];
    let p = pos;
    const cost = 5 + argspec.length + argspec.split('[').length - 1;
    try {
      if (argspec === 'verb') {
        if (p >= this.s.length) return null;
        const end = this.s.indexOf(this.s[p], p + 1);
        return [[{ kind: 'chars', text: '' }], end < 0 ? this.s.length : end + 1];
      }
      for (const a of argspec) {
        if (a === '{') {
          const [node, np] = this.expression(p, cost);
          args.push(node);
          p = np;
        } else if (a === '[') {
          if (noSpace && p < this.s.length && isPySpace(this.s[p])) {
            args.push(null);
            continue;
          }
          const opt = this.optional(p, cost);
          if (opt) {
            args.push(opt[0]);
            p = opt[1];
          } else args.push(null);
        } else {
          const tok = this.getToken(p);
          if (tok.tok === 'char' && tok.arg.startsWith('*')) {
            args.push({ kind: 'chars', text: '*' });
            p = tok.pos + 1;
          } else args.push(null);
        }
      }
    } catch (e) {
      if (e instanceof EndOfStream) return null;
      throw e;
    }
    return [args, p];
  }

  /** get_latex_expression: one argument token (a bare macro, a char, a specials, or a braced group). */
  private expression(pos: number, cost: number): [LatexNode, number] {
    const tok = this.getToken(pos, { environments: false });
    switch (tok.tok) {
      case 'macro':
        if (tok.arg === 'end') return [{ kind: 'chars', text: '' }, tok.pos];
        return [{ kind: 'macro', name: tok.arg, args: [], postSpace: tok.post, bare: true }, tok.pos + tok.len];
      case 'specials':
        return [{ kind: 'specials', chars: tok.arg }, tok.pos + tok.len];
      case 'comment':
        return this.expression(tok.pos + tok.len, cost);
      case 'open': {
        const [inner, np] = this.nodes(tok.pos + 1, { brace: '}' }, cost);
        return [{ kind: 'group', nodes: inner }, np];
      }
      case 'close':
        return [{ kind: 'chars', text: '' }, tok.pos];
      case 'char':
        return [{ kind: 'chars', text: tok.arg }, tok.pos + tok.len];
      case 'math':
        if (tok.arg.startsWith('\\')) return [{ kind: 'macro', name: tok.arg, args: [], postSpace: '', bare: true }, tok.pos + tok.len];
        return [{ kind: 'chars', text: tok.arg }, tok.pos + tok.len];
      default:
        return [{ kind: 'chars', text: '' }, tok.pos + tok.len];
    }
  }

  private optional(pos: number, cost: number): [LatexNode, number] | null {
    let tok: Token;
    try {
      tok = this.getToken(pos, { brackets: true, environments: false });
    } catch (e) {
      if (e instanceof EndOfStream) return null;
      throw e;
    }
    if (tok.tok !== 'open' || tok.arg !== '[') return null;
    const [inner, np] = this.nodes(tok.pos + 1, { brace: ']' }, cost);
    return [{ kind: 'group', nodes: inner }, np];
  }
}

/** Python's `repl % args` for the templates of the macro table; KeyError propagates, TypeError keeps the template. */
function percentFormat(repl: string, args: string[], forEnvironment?: { body: string }): string {
  const positional = /(^|[^%])(%%)*%s/.test(repl);
  const values: string[] | Record<string, string> = positional
    ? forEnvironment ? [forEnvironment.body] : args
    : Object.fromEntries([...args.map((a, j) => [String(j + 1), a]), ...(forEnvironment ? [['body', forEnvironment.body]] : [])]);
  let out = '';
  let used = 0;
  for (let i = 0; i < repl.length; i++) {
    if (repl[i] !== '%') {
      out += repl[i];
      continue;
    }
    const next = repl[i + 1];
    if (next === '%') {
      out += '%';
      i++;
    } else if (next === 's' && Array.isArray(values)) {
      if (used >= values.length) return repl;
      out += values[used++];
      i++;
    } else if (next === '(') {
      const close = repl.indexOf(')', i);
      if (close < 0 || repl[close + 1] !== 's' || Array.isArray(values)) return repl;
      const key = repl.slice(i + 2, close);
      if (!(key in values)) throw new LatexConversionError(`KeyError: ${key}`);
      out += values[key];
      i = close + 1;
    } else return repl;
  }
  if (Array.isArray(values) && used !== values.length) return repl;
  return out;
}

class Renderer {
  private inEquation = false;
  /** characters built so far by accents, matrices and math (see MAX_RENDERED_CHARS) */
  private built = 0;

  private build(chars: number, what: string): void {
    this.built += chars;
    if (this.built > MAX_RENDERED_CHARS) throw new LatexTooLargeError(`${what}: over ${MAX_RENDERED_CHARS} characters of text`);
  }

  list(nodes: LatexNode[]): string {
    let s = '';
    let prev: LatexNode | null = null;
    for (const node of nodes) {
      if (this.inEquation && prev?.kind === 'macro' && prev.bare && node.kind === 'chars') s += prev.postSpace;
      s += this.node(node);
      prev = node;
    }
    return s;
  }

  private arg(node: ArgNode): string {
    if (node === null) return '';
    return node.kind === 'group' ? this.list(node.nodes) : this.node(node);
  }

  private equation(nodes: LatexNode[], display: boolean): string {
    const saved = this.inEquation;
    this.inEquation = true;
    let content: string;
    try {
      content = pyStrip(this.list(nodes));
    } finally {
      this.inEquation = saved;
    }
    this.build(content.length, 'math');
    return display ? '\n    ' + content.replace(/\n/g, '\n    ') + '\n' : content;
  }

  private node(node: LatexNode): string {
    switch (node.kind) {
      case 'chars':
        return this.inEquation && pyStrip(node.text).length === 0 ? '' : node.text;
      case 'comment':
        return node.postSpace;
      case 'group':
        return this.list(node.nodes);
      case 'specials': {
        const found = SPECIALS.find(([c]) => c === node.chars);
        return found ? found[1] : node.chars;
      }
      case 'math':
        return this.equation(node.nodes, node.display);
      case 'env':
        return this.environment(node.name, node.nodes);
      case 'macro':
        return this.macro(node);
    }
  }

  private environment(name: string, nodes: LatexNode[]): string {
    const spec = ENVIRONMENTS.get(name);
    if (!spec) return this.list(nodes);
    const r = spec.rendering;
    if (r === 0) return '';
    if (r === 1) return this.list(nodes);
    if (typeof r === 'string') return r.includes('%') && r.length !== 1 ? percentFormat(r, [], { body: this.list(nodes) }) : r;
    if (MATRIX_ENVS.has(name)) return this.matrix(nodes);
    return this.equation(nodes, true);
  }

  private matrix(nodes: LatexNode[]): string {
    const rows: string[][] = [];
    let row: string[] = [];
    let buffer: LatexNode[] = [];
    const column = (): void => {
      if (buffer.length) row.push(pyStrip(this.list(buffer)));
      buffer = [];
    };
    for (const n of nodes) {
      if (n.kind === 'specials' && n.chars === '&') column();
      else if (n.kind === 'macro' && n.name === '\\') {
        column();
        rows.push(row);
        row = [];
      } else buffer.push(n);
    }
    column();
    rows.push(row);
    const cells = rows.flat();
    if (cells.length === 0) throw new LatexConversionError('max() arg is an empty sequence');
    const width = Math.max(...cells.map(pyLen));
    this.build(cells.length * (width + 1), 'matrix');
    return '[ ' + rows.map((r) => r.map((x) => ' '.repeat(Math.max(0, width - pyLen(x))) + x).join(' ')).join('; ') + ' ]';
  }

  private macro(node: Extract<LatexNode, { kind: 'macro' }>): string {
    const spec = MACROS.get(node.name);
    if (!spec || spec.rendering === 0) return '';
    const r = spec.rendering;
    const argText = (k: number): string => (k < node.args.length ? this.arg(node.args[k]) : '');
    if (r === 1) return node.args.map((a) => this.arg(a)).join('');
    if (typeof r === 'string') return r.includes('%') && r.length !== 1 ? percentFormat(r, node.args.map((a) => this.arg(a))) : r;
    const name = node.name;
    if (name in ACCENTS) {
      const base = node.args.length ? pyStrip(argText(0)) : ' ';
      if (base.length > MAX_ACCENTED_CHARS) throw new LatexTooLargeError(`accent over ${base.length} characters`);
      this.build(base.length, 'accent');
      let out = '';
      for (let ch of base) {
        if (ch === '\u0131') ch = 'i';
        if (ch === '\u0237') ch = 'j';
        out += (ch + ACCENTS[name]).normalize('NFC');
      }
      return out;
    }
    if (name in MATH_STYLES) {
      const [upper, lower, exceptions] = MATH_STYLES[name];
      let out = '';
      for (const ch of argText(0)) {
        const ex = exceptions[ch];
        if (ex !== undefined) out += String.fromCodePoint(ex);
        else if (ch >= 'A' && ch <= 'Z') out += String.fromCodePoint(upper + ch.charCodeAt(0) - 65);
        else if (ch >= 'a' && ch <= 'z') out += String.fromCodePoint(lower + ch.charCodeAt(0) - 97);
        else out += ch;
      }
      return out;
    }
    switch (name) {
      case '%':
        return '%';
      case 'item':
        return '\n  ' + (node.args[0] ? argText(0) : '* ');
      case 'texorpdfstring':
        return argText(1);
      case 'href': // indexes its argument list directly: IndexError without arguments
        if (node.args.length < 2) throw new LatexConversionError('IndexError in \\href');
        return `${argText(1)} <${argText(0)}>`;
      case 'part':
        return `\n\nPART: ${argText(2).toUpperCase()}\n`;
      case 'chapter':
        return `\n\nCHAPTER: ${argText(2).toUpperCase()}\n`;
      case 'section':
        return `\n\n\u00a7 ${argText(2).toUpperCase()}\n`;
      case 'subsection':
        return `\n\n \u00a7.\u00a7 ${argText(2)}\n`;
      case 'subsubsection':
        return `\n\n  \u00a7.\u00a7.\u00a7 ${argText(2)}\n`;
      case 'paragraph':
        return `\n\n  ${argText(2)}\n`;
      case 'subparagraph':
        return `\n\n    ${argText(2)}\n`;
      case 'includegraphics':
        return '\n    < g r a p h i c s >\n';
      case 'uebung':
      case 'exercise':
        return '\n' + argText(0) + '\n' + (node.args[1] ? `[${argText(1)}]\n` : '');
      default:
        return ''; // \title, \author, \date, \maketitle, \input, \include: nothing in an answer
    }
  }
}

/** pylatexenc 2.10 `LatexNodes2Text().latex_to_text(s)`; throws LatexConversionError where pylatexenc raises. */
export function latexToText(s: string): string {
  const [nodes] = new Walker(s).nodes(0);
  return new Renderer().list(nodes);
}
