// want: duplicateDetectionHistoryTimeWindow "P8D"
param window string = 'P8D'
var queueName = 'orders'

resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'
}

resource orders 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: ns
  name: queueName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: window
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    deadLetteringOnMessageExpiration: true
  }
}
