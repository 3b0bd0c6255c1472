/** One `packbot <command>`: its summary, usage and entry point (exit code). */
export interface Command {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}
