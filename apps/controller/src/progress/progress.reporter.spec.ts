import { formatArmLine, LiveProgress, PlainProgress } from './progress.reporter';

class Capture {
  text = '';
  isTTY = false;
  columns = 200;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

describe('progress', () => {
  it('formats an arm line with phase, step, reward, gate values and ETA', () => {
    expect(formatArmLine('gs1_kernel', { phase: 'train', step: 3, steps: 40, reward: 0.4123, gates: { ess_p10: 9.345, nonzero: 0.9 }, etaSeconds: 125 })).toBe(
      'gs1_kernel    train      step 3/40  reward 0.412  ess_p10 9.35  nonzero 0.90  ETA 2m05s',
    );
  });

  it('counts evaluation items as items, not steps', () => {
    expect(formatArmLine('base', { phase: 'eval', unit: 'item', step: 448, steps: 1319 })).toBe('base          eval       item 448/1319');
  });

  it('prints plain lines when not on a terminal', () => {
    const out = new Capture();
    const p = new PlainProgress(out);
    p.arm('a', { phase: 'train', step: 1 });
    p.info('hello');
    expect(out.text).toBe('a             train      step 1\nhello\n');
  });

  it('redraws one line per arm in place on a terminal, messages above the block', () => {
    const out = new Capture();
    out.isTTY = true;
    const p = new LiveProgress(out);
    p.arm('a', { phase: 'train', step: 1 });
    p.arm('b', { phase: 'train', step: 1 });
    p.arm('a', { phase: 'train', step: 2 });
    p.info('note');
    // the block (2 lines) is erased (cursor up 2, clear) before each redraw
    const last = out.text.split('\x1b[2A\x1b[J').pop();
    expect(last).toBe('note\na             train      step 2\nb             train      step 1\n');
  });
});
