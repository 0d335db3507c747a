import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { Config } from '../config';

/** Whether log lines are written for a person at a terminal rather than for a machine. */
export function logsArePretty(config: Pick<Config, 'logFormat'>, stdoutIsTerminal = process.stdout.isTTY === true): boolean {
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && stdoutIsTerminal);
}

/**
 * The process logger: JSON lines for files and process managers, readable
 * lines on a terminal (LOG_FORMAT=auto decides by whether stdout is a TTY).
 * The pretty stream is synchronous so the last lines before an exit are kept.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  const options = { level: config.logLevel, base: undefined };
  if (!logsArePretty(config)) return pino(options);
  return pino(options, pinoPretty({ colorize: process.stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}
