// want: reads a key or connection string
resource appi 'Microsoft.Insights/components@2020-02-02' existing = {
  name: 'appi'
}

output telemetry string = appi.properties.ConnectionString
