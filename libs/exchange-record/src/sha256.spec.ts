import { createHash } from 'node:crypto';
import { sha256Hex, sha256Text } from './sha256';

describe('sha256Text', () => {
  it('gives the FIPS 180-4 test vectors', () => {
    expect(sha256Text('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Text('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('agrees with node:crypto on every length across the padding boundaries, and on multi-byte UTF-8', () => {
    for (let n = 0; n < 200; n++) {
      const text = 'x'.repeat(n);
      expect(sha256Text(text)).toBe(createHash('sha256').update(text).digest('hex'));
    }
    const unicode = 'résumé ✓ 数学 🧮\n{"a":1}';
    expect(sha256Text(unicode)).toBe(createHash('sha256').update(unicode).digest('hex'));
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 31) & 0xff);
    expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});
