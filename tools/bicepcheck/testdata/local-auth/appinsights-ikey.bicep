// want: DisableLocalAuth must be true
resource appi 'Microsoft.Insights/components@2020-02-02' = {
  name: 'appi'
  location: 'westeurope'
  kind: 'web'
  properties: {
    Application_Type: 'web'
  }
}
