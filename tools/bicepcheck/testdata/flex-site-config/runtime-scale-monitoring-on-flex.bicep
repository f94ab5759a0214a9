// want: functionsRuntimeScaleMonitoringEnabled to Flex Consumption
param name string
param hostingPlan string
param appSubnetId string

var isFlex = hostingPlan == 'FlexConsumption'

var flexSiteConfig = {
  minTlsVersion: '1.2'
  functionsRuntimeScaleMonitoringEnabled: true
}

var premiumSiteConfig = {
  minTlsVersion: '1.2'
  functionsRuntimeScaleMonitoringEnabled: true
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: 'westeurope'
  kind: 'functionapp,linux'
  properties: {
    httpsOnly: true
    functionAppConfig: isFlex ? {} : null
    virtualNetworkSubnetId: appSubnetId
    siteConfig: isFlex ? flexSiteConfig : premiumSiteConfig
  }
}
