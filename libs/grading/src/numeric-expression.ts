// The part of sympy that the cookbook's `are_equal_under_sympy` needs for numeric answers: parse
// `(ground_truth)-(given)` the way `parse_expr` with implicit multiplication does, evaluate it, and say whether it
// is zero. Integers and their quotients are exact rationals (sympy's Integer / Rational); a decimal literal is a
// float64 (sympy's Float at its default 15-digit precision) and makes every result it touches a float64. Anything
// sympy would keep symbolic (names, sqrt, pi, roots of rationals) is out of scope: `undefined`, i.e. not shown
// equal. Sizes are capped so that evaluation is bounded in time (the cookbook has a 1 s timeout).
type Num = { exact: true; n: bigint; d: bigint } | { exact: false; x: number };

const MAX_TOKENS = 512;
const MAX_BITS = 4096;
const MAX_EXPONENT = 4096;

class Unsupported extends Error {}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

function rational(n: bigint, d: bigint): Num {
  if (d === 0n) throw new Unsupported('division by zero (sympy: zoo)');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  n /= g;
  d /= g;
  if (n.toString(2).length > MAX_BITS || d.toString(2).length > MAX_BITS) throw new Unsupported('number too large');
  return { exact: true, n, d };
}

function toFloat(v: Num): number {
  if (!v.exact) return v.x;
  const LIMIT = 2n ** 53n;
  const abs = (b: bigint): bigint => (b < 0n ? -b : b);
  if (abs(v.n) <= LIMIT && v.d <= LIMIT) return Number(v.n) / Number(v.d);
  // scale the quotient to 64 significant bits, then let the float division place the exponent
  const shift = BigInt(Math.max(0, 64 - (abs(v.n).toString(2).length - v.d.toString(2).length)));
  return Number((v.n << shift) / v.d) / 2 ** Number(shift);
}

function float(x: number): Num {
  if (!Number.isFinite(x)) throw new Unsupported('non-finite float');
  return { exact: false, x };
}

function add(a: Num, b: Num): Num {
  if (a.exact && b.exact) return rational(a.n * b.d + b.n * a.d, a.d * b.d);
  return float(toFloat(a) + toFloat(b));
}
function neg(a: Num): Num {
  return a.exact ? { exact: true, n: -a.n, d: a.d } : { exact: false, x: -a.x };
}
function mul(a: Num, b: Num): Num {
  if (a.exact && b.exact) return rational(a.n * b.n, a.d * b.d);
  return float(toFloat(a) * toFloat(b));
}
function div(a: Num, b: Num): Num {
  if (a.exact && b.exact) return rational(a.n * b.d, a.d * b.n);
  const y = toFloat(b);
  if (y === 0) throw new Unsupported('division by zero (sympy: zoo)');
  return float(toFloat(a) / y);
}
function pow(a: Num, b: Num): Num {
  if (a.exact && b.exact) {
    if (b.d !== 1n) throw new Unsupported('rational power stays symbolic in sympy');
    const e = b.n < 0n ? -b.n : b.n;
    if (e > BigInt(MAX_EXPONENT)) throw new Unsupported('exponent too large');
    if (a.n === 0n && b.n < 0n) throw new Unsupported('zero to a negative power (sympy: zoo)');
    const bits = Math.max(a.n < 0n ? (-a.n).toString(2).length : a.n.toString(2).length, a.d.toString(2).length);
    if (bits * Number(e) > MAX_BITS) throw new Unsupported('power too large');
    const n = a.n ** e;
    const d = a.d ** e;
    return b.n < 0n ? rational(d, n) : rational(n, d);
  }
  const x = toFloat(a);
  const y = toFloat(b);
  const r = Math.pow(x, y);
  if (Number.isNaN(r)) throw new Unsupported('complex result');
  return float(r);
}

// isqrt(n) = floor(sqrt(n)): Newton's x <- (x + n / x) / 2 in integers, from a power of two at or above the root;
// the iterates fall monotonically to the root (about log2(bits) steps), exact at any size
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

// sqrt: exact for squares of rationals, a float64 for floats; an irrational root stays symbolic in sympy
function squareRoot(a: Num): Num {
  if (!a.exact) {
    if (a.x < 0) throw new Unsupported('imaginary root');
    return float(Math.sqrt(a.x));
  }
  if (a.n < 0n) throw new Unsupported('imaginary root');
  const rn = isqrt(a.n);
  const rd = isqrt(a.d);
  if (rn * rn !== a.n || rd * rd !== a.d) throw new Unsupported('irrational root');
  return rational(rn, rd);
}

type Tok = ({ t: 'num'; v: Num } | { t: 'op'; v: string }) & { nl?: boolean };

// Python's tokenize NUMBER, tried in its order (point float, exponent float, decimal integer), without the
// underscore, prefix and imaginary forms; "03" is the two numbers 0 and 3, as Python's tokenizer reads it.
const NUMBER = /^(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[1-9][0-9]*|0+)/;

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let nl = false;
  const push = (t: Tok): void => {
    out.push(nl ? { ...t, nl } : t);
    nl = false;
  };
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\f' || c === '\n' || c === '\r') {
      if (c === '\n' || c === '\r') nl = true; // tokenize's NL token: no implicit '*' across it
      i++;
      continue;
    }
    if (out.length >= MAX_TOKENS) throw new Unsupported('expression too long');
    if (src.startsWith('**', i)) {
      push({ t: 'op', v: '**' });
      i += 2;
      continue;
    }
    if (src.startsWith('sqrt(', i)) {
      push({ t: 'op', v: 'sqrt' });
      i += 4;
      continue;
    }
    if ('+-*/()'.includes(c)) {
      if (c === '/' && src[i + 1] === '/') throw new Unsupported('floor division');
      push({ t: 'op', v: c });
      i++;
      continue;
    }
    const m = NUMBER.exec(src.slice(i, i + 400));
    if (!m) throw new Unsupported(`token ${JSON.stringify(c)}`);
    const text = m[0];
    const next = src[i + text.length];
    if (next !== undefined && /[A-Za-z_]/.test(next)) throw new Unsupported('number followed by a name');
    if (/[.eE]/.test(text)) push({ t: 'num', v: float(Number(text)) });
    else push({ t: 'num', v: { exact: true, n: BigInt(text), d: 1n } });
    i += text.length;
  }
  return out;
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly toks: Tok[]) {}

  private peekOp(v: string): boolean {
    const t = this.toks[this.i];
    return t !== undefined && t.t === 'op' && t.v === v;
  }

  parse(): Num {
    const v = this.expr();
    if (this.i !== this.toks.length) throw new Unsupported('trailing tokens');
    return v;
  }

  // expr := term (('+' | '-') term)*
  private expr(): Num {
    if (++this.depth > 200) throw new Unsupported('nesting too deep');
    let v = this.term();
    for (;;) {
      if (this.peekOp('+')) {
        this.i++;
        v = add(v, this.term());
      } else if (this.peekOp('-')) {
        this.i++;
        v = add(v, neg(this.term()));
      } else break;
    }
    this.depth--;
    return v;
  }

  // term := unary (('*' | '/' | juxtaposition) unary)*; sympy's auto_number turns each number into
  // `Integer(..)` / `Float(..)`, after which implicit multiplication inserts '*' wherever a ')' meets '(' or a
  // name: between any two adjacent numbers or parenthesised groups.
  private term(): Num {
    let v = this.unary();
    for (;;) {
      if (this.peekOp('*')) {
        this.i++;
        v = mul(v, this.unary());
      } else if (this.peekOp('/')) {
        this.i++;
        v = div(v, this.unary());
      } else if (this.peekOp('(') || this.peekOp('sqrt') || this.toks[this.i]?.t === 'num') {
        if (this.toks[this.i].nl) throw new Unsupported('juxtaposition across a newline (SyntaxError)');
        v = mul(v, this.unary());
      } else break;
    }
    return v;
  }

  // unary := ('+' | '-') unary | power   (Python: -2**2 == -4)
  private unary(): Num {
    if (this.peekOp('-')) {
      this.i++;
      return neg(this.unary());
    }
    if (this.peekOp('+')) {
      this.i++;
      return this.unary();
    }
    return this.power();
  }

  // power := atom ['**' unary]   (right associative)
  private power(): Num {
    const base = this.atom();
    if (this.peekOp('**')) {
      this.i++;
      return pow(base, this.unary());
    }
    return base;
  }

  private atom(): Num {
    const t = this.toks[this.i];
    if (t === undefined) throw new Unsupported('unexpected end');
    if (t.t === 'num') {
      this.i++;
      return t.v;
    }
    if (t.v === 'sqrt') {
      this.i++;
      return squareRoot(this.atom());
    }
    if (t.v === '(') {
      this.i++;
      const v = this.expr();
      if (!this.peekOp(')')) throw new Unsupported('unbalanced parenthesis');
      this.i++;
      return v;
    }
    throw new Unsupported(`unexpected ${t.v}`);
  }
}

/** True when `expr` (Python syntax, `^` already read as `**`) evaluates to exactly zero; undefined when out of scope. */
export function isZeroExpression(expr: string): boolean | undefined {
  try {
    const v = new Parser(tokenize(expr)).parse();
    return v.exact ? v.n === 0n : v.x === 0;
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}
