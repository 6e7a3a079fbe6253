import type { ToolContext } from '@stoa/mcp';

const PYTHON_WARNING = /\b\w*Warning: /;

/**
 * Forwards a kernel's stderr as MCP log messages (`notifications/message`, logger `{name}.kernel`), one per
 * complete line: Python warnings (`…Warning: …`) at `warning`, other lines at `info`. The client's level filters
 * them (ToolContext.log), so a client that never asked for logs gets none.
 */
export function stderrLogger(name: string, log: ToolContext['log']) {
  let partial = '';
  const logger = `${name}.kernel`;
  const send = (line: string): void => {
    if (line.trim()) void log(PYTHON_WARNING.test(line) ? 'warning' : 'info', line, logger);
  };
  return {
    push(stream: 'stdout' | 'stderr', text: string): void {
      if (stream !== 'stderr') return;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(send);
    },
    flush(): void {
      send(partial);
      partial = '';
    },
  };
}
