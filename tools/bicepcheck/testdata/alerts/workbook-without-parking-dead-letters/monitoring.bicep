// The workbook charts the dead letters of the orders queue only: those of the parking queue,
// which never expire, are on no chart.
param appInsightsId string

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, 'orders-workbook')
  location: 'westeurope'
  kind: 'shared'
  properties: {
    displayName: 'Order consumer'
    category: 'workbook'
    sourceId: appInsightsId
    serializedData: loadTextContent('orders.workbook.json')
  }
}
