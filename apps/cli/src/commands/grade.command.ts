import { UserError } from '../user-error';

// Placeholder until the command lands.
export async function run(_argv: string[]): Promise<number> {
  throw new UserError('the grade command is not implemented yet');
}
