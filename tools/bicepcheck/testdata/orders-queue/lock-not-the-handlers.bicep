// want: lockDuration is 120s but the handler takes the lock for 1m0s (QUEUE_LOCK_DURATION)
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'

  resource orders 'queues' = {
    name: 'orders'
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: 'PT10M'
      maxDeliveryCount: 10
      lockDuration: 'PT2M'
      deadLetteringOnMessageExpiration: true
    }
  }
}
