// The alerts of docs/runbook.md:
//   parked-orders      the parking queue holds messages (every parked message needs a person)
//   orders-deadlettered the broker dead-lettered messages of the orders queue (the handler
//                       failed for a message maxDeliveryCount times in a row) or of the parking
//                       queue (an operator's walk passed an envelope on its last delivery)
//   hash-mismatch      the handler logged an orderId that came back with a different payload
//   http-api-5xx       more than 5 % of the HTTP API's requests failed (500/503)
//   idempotency-key-reused  callers keep reusing Idempotency-Keys with other payloads (422)
// Service Bus metrics cannot be exported through diagnostic settings, so the first two are
// metric alerts on the namespace, split by the EntityName dimension.
param actionGroupName string
param alertEmail string
param tags object
param location string
param serviceBusName string
param ordersQueueName string
param parkingQueueName string
param appInsightsName string

var hasReceiver = !empty(alertEmail)

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (hasReceiver) {
  name: actionGroupName
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'orders'
    enabled: true
    emailReceivers: [
      {
        name: 'on-call'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

var metricActions = hasReceiver ? [
  {
    actionGroupId: actionGroup.id
  }
] : []

resource parkedOrders 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'parked-orders-${serviceBusName}'
  location: 'global'
  tags: tags
  properties: {
    description: 'Messages are waiting in the parking queue ${parkingQueueName}. Each one is an order the consumer refused (HashMismatch, ValidationFailed, MalformedMessage or RetryBudgetExhausted). See docs/runbook.md#parked-orders.'
    severity: 2
    enabled: true
    scopes: [
      namespace.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'ActiveMessagesInParkingQueue'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                parkingQueueName
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: metricActions
  }
}

resource ordersDeadLettered 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'orders-deadlettered-${serviceBusName}'
  location: 'global'
  tags: tags
  properties: {
    description: 'The broker dead-lettered messages of the ${ordersQueueName} queue (MaxDeliveryCountExceeded or expiry: the handler failed them every time) or of the parking queue ${parkingQueueName} (an envelope delivered maxDeliveryCount times). Dead letters never expire. See docs/runbook.md#orders-deadlettered.'
    severity: 1
    enabled: true
    scopes: [
      namespace.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'DeadletteredMessagesInOrdersAndParkingQueues'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [
            {
              name: 'EntityName'
              operator: 'Include'
              values: [
                ordersQueueName
                parkingQueueName
              ]
            }
          ]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: metricActions
  }
}

// The handler writes one JSON line per invocation on stdout (handler/process_order.go,
// logInvocation); the host forwards stdout to the traces table. A mismatch line carries
// "outcome":"mismatch" and "reason":"HashMismatch" (level ERROR). The invocation's human Logs line
// also names HashMismatch but has no "outcome": member, so each mismatch counts once.
resource hashMismatch 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'hash-mismatch-${appInsightsName}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Order resent with a different payload (HashMismatch)'
    description: 'An orderId arrived again with a payload whose fingerprint differs from the stored order. The stored order is unchanged and the message is parked. See docs/runbook.md#hash-mismatch.'
    severity: 2
    enabled: true
    scopes: [
      appInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    autoMitigate: false
    criteria: {
      allOf: [
        {
          query: 'traces | where message has "HashMismatch" | where message contains \'"outcome":"mismatch"\''
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: {
      actionGroups: hasReceiver ? [
        actionGroup.id
      ] : []
    }
  }
}

// The HTTP API (SubmitOrder, GetOrder). The host records one `requests` item per
// invocation with the HTTP status the handler answered as resultCode, and host.json keeps
// requests out of sampling, so the rate is exact. 503 (Cosmos DB unavailable, Retry-After) and
// 500 (the handler or the host failed) both count: callers retry them, but a lasting rate means orders are not getting in.
// At least 20 requests in the window, so two failures of a quiet hour do not page anyone.
resource httpAPIErrors 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'http-api-5xx-${appInsightsName}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'HTTP API failing (5xx rate above 5 %)'
    description: 'More than 5 % of SubmitOrder and GetOrder requests answered 5xx in 15 minutes. 503: Cosmos DB unavailable; 500: the handler or the host failed. Callers retry both with the same Idempotency-Key. See docs/runbook.md#http-api-5xx.'
    severity: 2
    enabled: true
    scopes: [
      appInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'requests | where name in ("SubmitOrder", "GetOrder") | summarize total = count(), failed = countif(toint(resultCode) >= 500) | where total >= 20 | extend failedPercent = 100.0 * failed / total'
          timeAggregation: 'Maximum'
          metricMeasureColumn: 'failedPercent'
          operator: 'GreaterThan'
          threshold: 5
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: {
      actionGroups: hasReceiver ? [
        actionGroup.id
      ] : []
    }
  }
}

// A reused key is a client bug (a partner's key generator repeating itself, or a key kept
// across different orders): every such order is refused, so a burst means orders are being
// lost on the caller's side. resultCode 422 alone would also count invalid orders, so the
// alert counts the handler's request line, whose outcome says which 422 it was
// (docs/contract.md, the HTTP API's log line).
resource keyReused 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'idempotency-key-reused-${appInsightsName}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Idempotency-Keys reused with other payloads (422)'
    description: 'SubmitOrder refused more than 5 requests in 15 minutes because their Idempotency-Key had been used with another payload. The orders were not accepted; the caller must send each new order with a new key. See docs/runbook.md#idempotency-key-reused.'
    severity: 3
    enabled: true
    scopes: [
      appInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'traces | where message has "keyReused" | where message contains \'"outcome":"keyReused"\''
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 5
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: {
      actionGroups: hasReceiver ? [
        actionGroup.id
      ] : []
    }
  }
}
