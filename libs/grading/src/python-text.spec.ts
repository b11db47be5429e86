import { decimalDigitValue, pyFloat, pyInt, pyLen, pySplitLines, pyStrip, truncatedIntString } from './python-text';

describe('Python string semantics', () => {
  it('float() like CPython', () => {
    expect(pyFloat(' 18 ')).toBe(18);
    expect(pyFloat('1_000.5')).toBe(1000.5);
    expect(pyFloat('.5')).toBe(0.5);
    expect(pyFloat('18.')).toBe(18);
    expect(pyFloat('\u0661\u0668')).toBe(18);
    expect(pyFloat('\u{1D7CF}\u{1D7D6}')).toBe(18);
    expect(pyFloat('1e400')).toBe(Infinity);
    expect(pyFloat('-Infinity')).toBe(-Infinity);
    expect(pyFloat('nan')).toBeNaN();
    for (const bad of ['1__0', '_1', '1_', '1,000', '', '1 0', '\u22125', '0x10', '1e']) expect(pyFloat(bad)).toBeNull();
  });
  it('int() like CPython', () => {
    expect(pyInt('+7')).toBe(7n);
    expect(pyInt(' 007 ')).toBe(7n);
    expect(pyInt('12345678901234567890123')).toBe(12345678901234567890123n);
    expect(pyInt('1.0')).toBeNull();
  });
  it('strip, splitlines, len over Unicode', () => {
    expect(pyStrip('\u3000\t x \u00a0\n')).toBe('x');
    expect(pySplitLines('a\r\nb\u2028c\n')).toEqual(['a', 'b', 'c']);
    expect(pySplitLines('')).toEqual([]);
    expect(pyLen('a\u{1F600}b')).toBe(3);
  });
  it('decimal digit values of any Nd digit', () => {
    expect(decimalDigitValue('7')).toBe(7);
    expect(decimalDigitValue('\u0669')).toBe(9);
    expect(decimalDigitValue('\u{1D7D6}')).toBe(8);
    expect(decimalDigitValue('x')).toBe(-1);
  });
  it('int(x) truncates toward zero, exactly', () => {
    expect(truncatedIntString(17.99999999)).toBe('17');
    expect(truncatedIntString(-0.5)).toBe('0');
    expect(truncatedIntString(1e20)).toBe('100000000000000000000');
  });
});
