// want: queue orders: the duplicate detection window (clamped to the emulator's PT5M) is 120s in Bicep but PT5M
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: 'orders'
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT2M'
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    deadLetteringOnMessageExpiration: true
  }
}
