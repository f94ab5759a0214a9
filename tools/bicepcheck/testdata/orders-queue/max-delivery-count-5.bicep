// want: maxDeliveryCount must be 10: the handler's retry budget (the default of RETRY_BUDGET_DELIVERY_COUNT
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'

  resource orders 'queues' = {
    name: 'orders'
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: 'PT10M'
      maxDeliveryCount: 5
      lockDuration: 'PT1M'
      deadLetteringOnMessageExpiration: true
    }
  }
}
