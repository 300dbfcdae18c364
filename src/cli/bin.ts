#!/usr/bin/env node
/** The `crm-upsert` entry: run the program, exit with its code. */
import { main } from './program.js';

const code = await main(process.argv);
process.exit(code);
