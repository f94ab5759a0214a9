// want: listKeys(...) fetches keys
param accountId string

var storageKey = listKeys(accountId, '2023-05-01').keys[0].value
