// TEST FIXTURE. GSM8K-shaped problems the hash-chain test policy can answer: "What is a + b?", answer "#### c".
import type { Problem } from '@rx/contracts';

export function arithmeticProblems(count: number, offset = 0): Problem[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + offset;
    // prompt lengths vary with the digits, so phi_0 = ln(prompt length) varies across prompts
    const a = 3 + ((i * 37) % 9000);
    const b = 1 + ((i * 11) % 97);
    return { promptId: `arith-${i}`, question: `What is ${a} + ${b}?`, answer: `${a} + ${b} = ${a + b}\n#### ${a + b}` };
  });
}
