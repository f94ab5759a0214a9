// want: queue orders: lockDuration is PT2M in Bicep but PT1M
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders'
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT10M'
    maxDeliveryCount: 10
    lockDuration: 'PT2M'
    deadLetteringOnMessageExpiration: true
  }
}
