// One question with its reference answer: GSM8K-style, the answer's last `#### N` line is the ground truth.
export interface Problem {
  id: string;
  question: string;
  answer: string;
}
