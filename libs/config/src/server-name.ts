import { z } from 'zod';

/**
 * A server's name (executor, router, gateway, dispatcher) and the labels of upstreams, workers and peers.
 * The reference puts no rule on `ServerConfig.name`; names become part of MCP tool names (`execute_{name}_code`,
 * `search_{name}_tools`, `{name}_send`), so they keep to the characters every MCP client and LLM function-calling
 * API accepts in a tool name: letters, digits, `_` and `-` (so `science-hub` works). `.` is left out because
 * several function-calling APIs refuse it. At most 47 characters, so the longest tool name
 * (`{name}_get_session_info`, `{name}_parallel_execute`) stays within the 64 those APIs allow.
 * No Python identifier is derived from the name: kernels see domain functions and `list_tools()` only.
 */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,46}$/;

/** zod schema for the name rule above, with a message that says what to change. */
export const serverName = z
  .string()
  .regex(
    NAME_PATTERN,
    'use 1-47 letters, digits, _ and - starting with a letter or digit (the name becomes part of MCP tool names such as execute_{name}_code)',
  );
