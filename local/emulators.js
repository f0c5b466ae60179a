#!/usr/bin/env node
// emulators.js starts the local AWS-compatible servers hookinbox tests and
// `hookinbox dev` use, in one Node process:
//
//   DynamoDB  dynalite       (tables are ACTIVE at once; no TTL expiry, no transactions;
//                             a refused conditional write returns the item, below)
//   SQS       local-aws-sqs  (JSON and query protocols, RedrivePolicy, StartMessageMoveTask)
//
// Both listen on 127.0.0.1 only, on free ports unless --dynamodb-port or
// --sqs-port is given. Once both listen it prints exactly one JSON line on
// stdout and nothing else there:
//
//   {"dynamodb":"http://127.0.0.1:P1","sqs":"http://127.0.0.1:P2"}
//
// Before that it warms both up (--warmup N: N event lives of the
// requests hookinbox makes, default DEFAULT_WARMUP, 0 for none; see
// warmup.js) and says so in one line on stderr.
//
// It exits when its stdin closes, so it never outlives the process that
// started it with a pipe (pass --ignore-stdin to run it detached), and on
// SIGINT or SIGTERM. Errors go to stderr and exit with status 1.
'use strict'

const dynalite = require('dynalite')
const { createSqsServer } = require('local-aws-sqs')
const { warmup } = require('./warmup')

const HOST = '127.0.0.1'

// DEFAULT_WARMUP is how many event lives (warmup.js: six requests each,
// four more every tenth) the emulators serve themselves before they say
// they are ready, so that node has compiled their paths: node's CPU a
// request settles after about 600.
const DEFAULT_WARMUP = 800

function usage (msg) {
  if (msg) console.error('emulators.js: ' + msg)
  console.error('usage: node emulators.js [--dynamodb-port N] [--sqs-port N] [--warmup N] [--ignore-stdin]')
  process.exit(2)
}

function parseArgs (argv) {
  const opts = { dynamodbPort: 0, sqsPort: 0, ignoreStdin: false, warmup: DEFAULT_WARMUP }
  for (let i = 0; i < argv.length; i++) {
    let [name, value] = argv[i].split(/=(.*)/s, 2)
    const port = () => {
      if (value === undefined) value = argv[++i]
      const n = Number(value)
      if (!Number.isInteger(n) || n < 0 || n > 65535) usage(`${name}: not a port: ${value}`)
      return n
    }
    const count = () => {
      if (value === undefined) value = argv[++i]
      const n = Number(value)
      if (!Number.isInteger(n) || n < 0) usage(`${name}: not a count: ${value}`)
      return n
    }
    switch (name) {
      case '--dynamodb-port': opts.dynamodbPort = port(); break
      case '--sqs-port': opts.sqsPort = port(); break
      case '--ignore-stdin': opts.ignoreStdin = true; break
      case '--warmup': opts.warmup = count(); break
      case '-h': case '--help': usage(); break
      default: usage(`unknown argument ${argv[i]}`)
    }
  }
  return opts
}

function fail (what, err) {
  // System errors (EADDRINUSE, EACCES) say all there is in their message.
  const text = err && err.code ? err.message : (err && err.stack) || String(err)
  console.error(`emulators.js: ${what}: ${text}`)
  process.exit(1)
}

// returnItemOnConditionFailure makes dynalite answer a conditional write
// that asked for ReturnValuesOnConditionCheckFailure ALL_OLD as DynamoDB
// does: the ConditionalCheckFailedException carries the item as it is
// ("Item"), so the caller needs no GetItem to learn why it lost. dynalite
// 4 drops the parameter (its validations keep only the members they
// list); its PutItem, UpdateItem and DeleteItem all call
// db.checkConditional with the existing item, looked up at call time.
function returnItemOnConditionFailure () {
  for (const action of ['putItem', 'updateItem', 'deleteItem']) {
    require('dynalite/validations/' + action).types.ReturnValuesOnConditionCheckFailure = {
      type: 'String',
      enum: ['ALL_OLD', 'NONE']
    }
  }
  const db = require('dynalite/db')
  const check = db.checkConditional
  db.checkConditional = function (data, existingItem) {
    const err = check(data, existingItem)
    if (err && existingItem && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') {
      err.body.Item = existingItem
    }
    return err
  }
}

function startDynamoDB (port) {
  returnItemOnConditionFailure()
  return new Promise((resolve, reject) => {
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
    server.once('error', reject)
    server.listen(port, HOST, () => resolve(server))
  })
}

async function startSQS (port) {
  // local-aws-sqs builds queue URLs from hostname and the port it listens on
  // (it reads the port back after listen, so port 0 works):
  // http://127.0.0.1:P/123456789012/<QueueName>, the same endpoint the SDK
  // is given. A listen error surfaces as an uncaught 'error' event, handled
  // below.
  return createSqsServer({
    port,
    hostname: HOST,
    region: 'us-east-1',
    accountId: '123456789012',
    // Tests delete and recreate queues with the same names at once.
    emulateQueueCreationLifecycle: false,
    emulateLazyQueues: false,
    validateDlqDestination: true
  })
}

function url (server) {
  return `http://${HOST}:${server.address().port}`
}

async function main () {
  const opts = parseArgs(process.argv.slice(2))
  process.on('uncaughtException', (err) => fail('uncaught exception', err))
  process.on('SIGINT', () => process.exit(0))
  process.on('SIGTERM', () => process.exit(0))
  if (!opts.ignoreStdin) {
    // The parent holds the write end of our stdin; when it exits or closes
    // the pipe we see end-of-file and leave.
    process.stdin.on('end', () => process.exit(0))
    process.stdin.on('close', () => process.exit(0))
    process.stdin.on('error', () => process.exit(0))
    process.stdin.resume()
  }

  let ddb, sqs
  try {
    ddb = await startDynamoDB(opts.dynamodbPort)
  } catch (err) {
    fail(`dynalite on ${HOST}:${opts.dynamodbPort}`, err)
  }
  try {
    sqs = await startSQS(opts.sqsPort)
  } catch (err) {
    fail(`local-aws-sqs on ${HOST}:${opts.sqsPort}`, err)
  }
  if (opts.warmup > 0) {
    const start = Date.now()
    try {
      const requests = await warmup(url(ddb), url(sqs), opts.warmup)
      console.error(`emulators.js: warmed up: ${opts.warmup} event lives, ${requests} requests in ${((Date.now() - start) / 1000).toFixed(1)} s`)
    } catch (err) {
      fail('warm-up', err)
    }
  }
  process.stdout.write(JSON.stringify({ dynamodb: url(ddb), sqs: url(sqs) }) + '\n')
}

main().catch((err) => fail('start', err))
