'use strict'
// warmup.js sends the emulators the requests hookinbox makes, over HTTP on
// loopback, before anyone else does, and removes what they wrote.
//
// Node compiles a code path to fast machine code only after running it a
// few thousand times. Until then dynalite and local-aws-sqs spend two to
// three times the CPU a request (docs/performance.md), and a run of the
// receiver beside the floor charged that to whichever went first. Warmed
// here, the first webhook of `make dev` is as fast as the thousandth, and
// two targets measured side by side on a fresh pair of emulators start
// even.
//
// Every request goes to a table and a queue of the warm-up's own, with
// names no caller uses (hookinbox-warmup-<pid>), deleted at the end: a
// caller sees emulators with no tables and no queues, as without it.

const http = require('http')

// The status item's shape (internal/inbox), so that every attribute type
// the inbox writes (S, N, B, BOOL) and its index entry are exercised.
function statusItem (i, payload) {
  return {
    pk: { S: `stripe#evt_warmup${String(i).padStart(9, '0')}` },
    sk: { S: 'event' },
    status: { S: 'RECEIVED' },
    provider: { S: 'stripe' },
    event_type: { S: 'checkout.session.completed' },
    livemode: { BOOL: false },
    created: { N: '1764590400' },
    received_at: { S: '2026-12-01T12:00:00.123456789Z' },
    enqueued_at: { N: String(1764590400123 + i) },
    payload_sha256: { S: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' },
    expires_at: { N: '1765800000' },
    attempts: { N: '0' },
    pending: { S: String(i % 16) },
    payload_deflate: { B: payload }
  }
}

// client returns a function that sends one request of a JSON-protocol AWS
// API (DynamoDB's or SQS's) and resolves to its parsed answer, whatever
// the status: a refusal is as much a code path to warm as a success.
function client (base, targetPrefix, service) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const url = new URL(base)
  return (action, body) => new Promise((resolve, reject) => {
    const data = JSON.stringify(body)
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/',
      agent,
      headers: {
        'Content-Type': 'application/x-amz-json-1.0',
        'Content-Length': Buffer.byteLength(data),
        'X-Amz-Target': `${targetPrefix}.${action}`,
        'X-Amz-Date': '20261201T120000Z',
        // Neither emulator checks a signature; both want its form.
        Authorization: `AWS4-HMAC-SHA256 Credential=warmup/20261201/us-east-1/${service}/aws4_request, ` +
          'SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=' + '0'.repeat(64)
      }
    }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString()
        let parsed = {}
        try { parsed = text ? JSON.parse(text) : {} } catch (err) { return reject(new Error(`${action}: ${text.slice(0, 200)}`)) }
        resolve({ status: res.statusCode, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(data)
  })
}

// must resolves to the answer of a request that has to succeed.
async function must (call, action, body) {
  const res = await call(action, body)
  if (res.status !== 200) throw new Error(`${action}: HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
  return res.body
}

// warmup runs rounds of an event's life on both emulators, from
// `concurrency` senders, then deletes its table and queue. It resolves to
// the number of requests it sent.
async function warmup (dynamodbURL, sqsURL, rounds, concurrency = 4) {
  if (rounds <= 0) return 0
  let requests = 0
  const counted = (call) => (action, body) => { requests++; return call(action, body) }
  const ddb = counted(client(dynamodbURL, 'DynamoDB_20120810', 'dynamodb'))
  const sqs = counted(client(sqsURL, 'AmazonSQS', 'sqs'))
  const table = `hookinbox-warmup-${process.pid}`
  await must(ddb, 'CreateTable', {
    TableName: table,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'pending', AttributeType: 'S' },
      { AttributeName: 'enqueued_at', AttributeType: 'N' }
    ],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    GlobalSecondaryIndexes: [{
      IndexName: 'pending',
      KeySchema: [{ AttributeName: 'pending', KeyType: 'HASH' }, { AttributeName: 'enqueued_at', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'provider', 'event_type', 'received_at', 'lease_until', 'attempts'] }
    }],
    BillingMode: 'PAY_PER_REQUEST'
  })
  const { QueueUrl: queueURL } = await must(sqs, 'CreateQueue', { QueueName: table })
  try {
    const payload = Buffer.alloc(1200, 'hookinbox warm-up payload ').toString('base64')
    let next = 0
    const sender = async () => {
      for (let i = next++; i < rounds; i = next++) {
        await eventLife(ddb, sqs, table, queueURL, statusItem(i, payload), i)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, sender))
  } finally {
    await must(sqs, 'DeleteQueue', { QueueUrl: queueURL })
    await must(ddb, 'DeleteTable', { TableName: table })
  }
  return requests
}

// eventLife is what the receiver and the processor ask of the emulators
// for one event delivered twice: the claim, the refused second claim with
// the item it returns, the message, the lease, the read, the finish; and,
// for every tenth, a read of the pending index and a batch of messages
// received and deleted.
async function eventLife (ddb, sqs, table, queueURL, item, i) {
  const claim = {
    TableName: table,
    Item: item,
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD'
  }
  await must(ddb, 'PutItem', claim)
  await ddb('PutItem', claim) // refused: the item is there
  await must(sqs, 'SendMessage', { QueueUrl: queueURL, MessageBody: JSON.stringify({ key: item.pk.S, type: item.event_type.S }) })
  const key = { pk: item.pk, sk: item.sk }
  await must(ddb, 'UpdateItem', {
    TableName: table,
    Key: key,
    UpdateExpression: 'SET #s = :p, lease_owner = :o, lease_until = :u, attempts = attempts + :one',
    ConditionExpression: '#s IN (:r, :p) AND (attribute_not_exists(lease_until) OR lease_until < :now)',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':p': { S: 'PROCESSING' },
      ':r': { S: 'RECEIVED' },
      ':o': { S: 'warmup' },
      ':u': { N: '1764590460000' },
      ':now': { N: '1764590400000' },
      ':one': { N: '1' }
    },
    ReturnValues: 'ALL_NEW'
  })
  await must(ddb, 'GetItem', { TableName: table, Key: key, ConsistentRead: true })
  await must(ddb, 'UpdateItem', {
    TableName: table,
    Key: key,
    UpdateExpression: 'SET #s = :d, processed_at = :t, outcome = :o REMOVE pending, lease_owner, lease_until',
    ConditionExpression: 'lease_owner = :w',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':d': { S: 'DONE' },
      ':t': { S: '2026-12-01T12:00:01Z' },
      ':o': { S: 'done' },
      ':w': { S: 'warmup' }
    }
  })
  if (i % 10 === 0) {
    await must(ddb, 'Query', {
      TableName: table,
      IndexName: 'pending',
      KeyConditionExpression: 'pending = :s AND enqueued_at < :c',
      ExpressionAttributeValues: { ':s': { S: String(i % 16) }, ':c': { N: '1764590500000' } },
      Limit: 10
    })
    const { Messages: msgs = [] } = await must(sqs, 'ReceiveMessage', { QueueUrl: queueURL, MaxNumberOfMessages: 10, AttributeNames: ['All'] })
    if (msgs.length > 0) {
      await must(sqs, 'DeleteMessageBatch', {
        QueueUrl: queueURL,
        Entries: msgs.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle }))
      })
    }
    await must(ddb, 'DeleteItem', { TableName: table, Key: key })
  }
}

module.exports = { warmup }
