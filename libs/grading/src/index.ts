export * from './gsm8k-answer';
export * from './boxed-answer';
export * from './math-grade';
export * from './problem-reward';
export { normalizeAnswer, normalizeExpression } from './answer-normalize';
export { LatexConversionError, latexToText } from './latex-to-text';
