#!/usr/bin/env node
// hub's command line. The product is TypeScript run through tsx's loader, so no build step
// stands between a clone and a running hub.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
