/** A variable whose value the processes refuse: the message names it, and the process stops. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid configuration: ${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}
