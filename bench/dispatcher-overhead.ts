/**
 * dispatcher-overhead: the same MCP calls straight to the demo executor and through a dispatcher in front of it,
 * interleaved in one run (cases and method in bench/lib/overhead.ts).
 */
import { runBench } from './lib/bench';
import { overhead } from './lib/overhead';

runBench('dispatcher-overhead', () => overhead('dispatcher'));
