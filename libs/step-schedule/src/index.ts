// The step schedule: what the controller asks of step N of an arm, a pure function of the spec, the arm, the step
// and the bandwidth (prompts, plan, LoRA, sampling seed).
export * from './step-schedule';
