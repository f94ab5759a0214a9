// want: sends siteConfig.http20Enabled to Flex Consumption
param hostingPlan string
param flexConfig object

var isFlex = hostingPlan == 'FlexConsumption'

var flexSiteConfig = {
  minTlsVersion: '1.2'
  http20Enabled: true
}

var premiumSiteConfig = {
  minTlsVersion: '1.2'
  ftpsState: 'Disabled'
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: 'func'
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    functionAppConfig: isFlex ? flexConfig : null
    siteConfig: isFlex ? flexSiteConfig : premiumSiteConfig
  }
}
