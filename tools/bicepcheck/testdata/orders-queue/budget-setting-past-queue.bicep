// want: maxDeliveryCount must be 13: the handler's retry budget (app setting RETRY_BUDGET_DELIVERY_COUNT
param name string

resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: 'sb'

  resource orders 'queues' = {
    name: 'orders'
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: 'PT10M'
      maxDeliveryCount: 10
      lockDuration: 'PT1M'
      deadLetteringOnMessageExpiration: true
    }
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: name
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: {
    RETRY_BUDGET_DELIVERY_COUNT: '12'
  }
}
