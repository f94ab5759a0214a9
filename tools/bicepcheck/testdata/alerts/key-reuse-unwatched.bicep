// want: no log alert counts SubmitOrder's "outcome":"keyReused" lines
param namespaceId string
param appInsightsId string

resource parked 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'parked-orders'
  location: 'global'
  properties: {
    severity: 2
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
          name: 'Parked'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                'orders-deadletter'
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

// The 5xx alert is there; nothing counts reused keys.
resource httpAPIErrors 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'submit-5xx'
  location: 'westeurope'
  kind: 'LogAlert'
  properties: {
    severity: 2
    enabled: true
    scopes: [
      appInsightsId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: 'requests | where name in ("SubmitOrder", "GetOrder") | where toint(resultCode) >= 500'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
        }
      ]
    }
  }
}
