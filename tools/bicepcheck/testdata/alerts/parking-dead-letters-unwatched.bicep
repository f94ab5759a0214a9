// want: no metric alert on DeadletteredMessages with EntityName orders-deadletter
param namespaceId string
param ordersQueueName string

resource deadLettered 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'orders-deadlettered'
  location: 'global'
  properties: {
    severity: 1
    enabled: true
    scopes: [
      namespaceId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'DeadLettered'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                ordersQueueName
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
  }
}
