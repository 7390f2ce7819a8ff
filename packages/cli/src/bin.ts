#!/usr/bin/env node
import { processIo } from "./cli-io.ts";
import { runCli } from "./cli-main.ts";

const code = await runCli(process.argv.slice(2), processIo);
process.exitCode = code;
