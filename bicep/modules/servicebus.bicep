// Service Bus Standard namespace with SAS switched off, the orders queue the consumer reads,
// the parking queue it writes rejected messages to, and the topic the outbox publisher writes.
// The entity names are part of the app's contract (function.json names them) and are literals
// here on purpose: tools/bicepcheck compares them with every function.json.
param name string
param location string
param tags object

@description('Duplicate detection window of the orders queue (ISO 8601, PT20S to P7D).')
param duplicateDetectionWindow string = 'PT10M'

@description('Peek-lock duration of the orders queue (ISO 8601, at most PT5M).')
param lockDuration string = 'PT1M'

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

// Producers set MessageId = orderId:<hash of the body> (contract section 3, ADR 0010), so the broker
// drops an exact resend inside the window before the consumer sees it and lets a conflicting one
// through to be parked; the consumer's own orderId + fingerprint check covers everything outside it
// (docs/adr/0001-dedup-key-and-fingerprint.md). requiresDuplicateDetection cannot be changed
// after creation: changing it means a new queue.
// maxDeliveryCount is one past the handler's retry budget (docs/contract.md §5): the handler parks
// a message as RetryBudgetExhausted before the broker dead-letters it without a reason. main.bicep
// gives the app RETRY_BUDGET_DELIVERY_COUNT = maxDeliveryCount - 1; tools/bicepcheck rule
// orders-queue checks this value is the handler's default (orders.DefaultRetryBudget) + 1, so local
// runs park where Azure does, and rule local-stack checks local/servicebus-config.json against it.
resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders'
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
    maxDeliveryCount: 10
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    defaultMessageTimeToLive: 'P14D'
    requiresSession: false
    enablePartitioning: false
  }
}

// Rejected messages (HashMismatch, ValidationFailed, MalformedMessage, RetryBudgetExhausted)
// arrive here as a JSON envelope written by the ProcessOrder output binding. Nothing consumes
// this queue automatically: an operator reads it (docs/runbook.md). Envelopes never expire: the
// broker's unlimited time to live, written out so that a deployment over a queue created with a
// finite one sets it back. An envelope may point at a body kept in Cosmos DB and must neither
// vanish nor outlive it (docs/adr/0013-parked-messages-never-expire.md; tools/bicepcheck rule
// parked-lifetime).
resource parkingQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders-deadletter'
  properties: {
    requiresDuplicateDetection: false
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    defaultMessageTimeToLive: 'P10675199DT2H48M5.4775807S'
    requiresSession: false
    enablePartitioning: false
  }
}

// OrderAccepted events from the change-feed publisher (PublishOrderEvents). The output binding
// cannot set MessageId, so broker duplicate detection would not help; consumers deduplicate on
// the event id in the body. A topic without subscriptions drops what it receives: each
// downstream consumer creates its own subscription.
resource eventsTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: 'order-events'
  properties: {
    requiresDuplicateDetection: false
    defaultMessageTimeToLive: 'P14D'
    enablePartitioning: false
  }
}

output name string = namespace.name
// serviceBusEndpoint is https://<name>.servicebus.windows.net:443/ (the suffix differs in
// sovereign clouds); the trigger wants the bare host name.
output fullyQualifiedNamespace string = split(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':')[0]
output ordersQueueName string = ordersQueue.name
output ordersMaxDeliveryCount int = ordersQueue.properties.maxDeliveryCount
output parkingQueueName string = parkingQueue.name
output eventsTopicName string = eventsTopic.name
