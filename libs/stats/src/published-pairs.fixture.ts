// The published gs1-vs-grpo run's paired outcomes (../shared/seed/published-record.txt): 152 items only GS1 gets
// right, 112 only GRPO, 1055 both or neither (n = 1319), for the tests' seed numbers. Test-only.

/** treatment, baseline per item: the 152 and 112 discordant items, then the concordant ones (alternately both right, both wrong) */
export function publishedPairs(): { treatment: number[]; baseline: number[] } {
  const treatment: number[] = [];
  const baseline: number[] = [];
  const add = (t: number, b: number, count: number) => {
    for (let i = 0; i < count; i++) {
      treatment.push(t);
      baseline.push(b);
    }
  };
  add(1, 0, 152);
  add(0, 1, 112);
  for (let i = 0; i < 1055; i++) add(i % 2, i % 2, 1);
  return { treatment, baseline };
}

export const PUBLISHED_RULE = { alpha: 0.05, bounds: [0, 1] as const, margin: -0.03, weights: { treatment: 1, baseline: -1 } };
