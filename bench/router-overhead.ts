/**
 * router-overhead: the same MCP calls straight to the demo executor and through a router in front of it,
 * interleaved in one run (cases and method in bench/lib/overhead.ts).
 */
import { runBench } from './lib/bench';
import { overhead } from './lib/overhead';

runBench('router-overhead', () => overhead('router'));
