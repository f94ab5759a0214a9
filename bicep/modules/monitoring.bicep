// Log Analytics workspace and a workspace-based Application Insights component with local
// (instrumentation-key) authentication switched off: telemetry is accepted only from Entra
// identities holding Monitoring Metrics Publisher on the component (modules/rbac.bicep).
param logAnalyticsName string
param appInsightsName string
param location string
param tags object
param retentionInDays int

@description('Resource id of the Service Bus namespace: the workbook charts its dead-letter queues from the namespace metrics.')
param serviceBusNamespaceId string

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    DisableLocalAuth: true
  }
}

output appInsightsName string = appInsights.name
output logAnalyticsName string = workspace.name

// The operators' workbook (docs/runbook.md#dashboard): outcomes, duplicates by cause, parked by
// reason, latency and request units, all read from the handler's one JSON line per message. Its
// queries name only fields the handler writes (handler/workbook_test.go checks them offline).
// One chart reads the namespace metrics instead (dead letters of orders and of the parking
// queue, which never expire): the JSON names the namespace by a placeholder replaced here.
resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, appInsightsName, 'orders-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Order consumer (${appInsightsName})'
    category: 'workbook'
    sourceId: appInsights.id
    serializedData: replace(loadTextContent('workbook/orders.workbook.json'), '__SERVICEBUS_NAMESPACE_ID__', serviceBusNamespaceId)
  }
}
