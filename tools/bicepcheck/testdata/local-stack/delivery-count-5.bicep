// want: queue orders: maxDeliveryCount is 5 in Bicep but 10 in local/servicebus-config.json
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders'
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT10M'
    maxDeliveryCount: 5
    lockDuration: 'PT1M'
    deadLetteringOnMessageExpiration: true
  }
}
