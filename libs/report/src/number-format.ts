// Numbers as the report prints them, in tables, captions and chart labels.

/** 3 significant digits, no trailing zeros */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  return String(Number(x.toPrecision(Math.abs(x) >= 1000 ? 6 : 3)));
}
